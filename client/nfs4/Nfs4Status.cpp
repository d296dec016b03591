#include "client/nfs4/Nfs4Status.h"

#include <string>

namespace nfsrdma::nfs4 {
namespace {

struct StatusInfo {
  std::uint32_t code;
  const char* name;
  const char* text;
};

// RFC 8881 section 15.1; the text follows errno wording where one exists.
constexpr StatusInfo kStatuses[] = {
    {0, "NFS4_OK", "success"},
    {1, "NFS4ERR_PERM", "operation not permitted"},
    {2, "NFS4ERR_NOENT", "no such file or directory"},
    {5, "NFS4ERR_IO", "input/output error"},
    {6, "NFS4ERR_NXIO", "no such device or address"},
    {13, "NFS4ERR_ACCESS", "permission denied"},
    {17, "NFS4ERR_EXIST", "file exists"},
    {18, "NFS4ERR_XDEV", "cross-device link"},
    {20, "NFS4ERR_NOTDIR", "not a directory"},
    {21, "NFS4ERR_ISDIR", "is a directory"},
    {22, "NFS4ERR_INVAL", "invalid argument"},
    {27, "NFS4ERR_FBIG", "file too large"},
    {28, "NFS4ERR_NOSPC", "no space left on device"},
    {30, "NFS4ERR_ROFS", "read-only file system"},
    {31, "NFS4ERR_MLINK", "too many links"},
    {63, "NFS4ERR_NAMETOOLONG", "file name too long"},
    {66, "NFS4ERR_NOTEMPTY", "directory not empty"},
    {69, "NFS4ERR_DQUOT", "disk quota exceeded"},
    {70, "NFS4ERR_STALE", "stale file handle"},
    {10001, "NFS4ERR_BADHANDLE", "illegal file handle"},
    {10003, "NFS4ERR_BAD_COOKIE", "READDIR cookie is stale"},
    {10004, "NFS4ERR_NOTSUPP", "operation not supported"},
    {10005, "NFS4ERR_TOOSMALL", "buffer too small"},
    {10006, "NFS4ERR_SERVERFAULT", "server fault"},
    {10007, "NFS4ERR_BADTYPE", "object type not supported"},
    {10008, "NFS4ERR_DELAY", "server busy, retry later"},
    {10009, "NFS4ERR_SAME", "attributes are the same"},
    {10010, "NFS4ERR_DENIED", "lock denied"},
    {10011, "NFS4ERR_EXPIRED", "lease expired"},
    {10012, "NFS4ERR_LOCKED", "I/O conflicts with a lock"},
    {10013, "NFS4ERR_GRACE", "server in grace period"},
    {10014, "NFS4ERR_FHEXPIRED", "file handle expired"},
    {10015, "NFS4ERR_SHARE_DENIED", "share reservation denied"},
    {10016, "NFS4ERR_WRONGSEC", "wrong security flavor"},
    {10017, "NFS4ERR_CLID_INUSE", "client id in use"},
    {10018, "NFS4ERR_RESOURCE", "server out of resources"},
    {10019, "NFS4ERR_MOVED", "file system moved"},
    {10020, "NFS4ERR_NOFILEHANDLE", "no current file handle"},
    {10021, "NFS4ERR_MINOR_VERS_MISMATCH", "minor version not supported"},
    {10022, "NFS4ERR_STALE_CLIENTID", "stale client id"},
    {10023, "NFS4ERR_STALE_STATEID", "stale state id"},
    {10024, "NFS4ERR_OLD_STATEID", "old state id"},
    {10025, "NFS4ERR_BAD_STATEID", "bad state id"},
    {10026, "NFS4ERR_BAD_SEQID", "bad sequence id"},
    {10027, "NFS4ERR_NOT_SAME", "attributes differ"},
    {10028, "NFS4ERR_LOCK_RANGE", "lock range not supported"},
    {10029, "NFS4ERR_SYMLINK", "is a symbolic link"},
    {10030, "NFS4ERR_RESTOREFH", "no saved file handle"},
    {10031, "NFS4ERR_LEASE_MOVED", "lease moved"},
    {10032, "NFS4ERR_ATTRNOTSUPP", "attribute not supported"},
    {10033, "NFS4ERR_NO_GRACE", "reclaim outside grace period"},
    {10034, "NFS4ERR_RECLAIM_BAD", "bad reclaim"},
    {10035, "NFS4ERR_RECLAIM_CONFLICT", "reclaim conflict"},
    {10036, "NFS4ERR_BADXDR", "server could not decode the arguments"},
    {10037, "NFS4ERR_LOCKS_HELD", "locks held"},
    {10038, "NFS4ERR_OPENMODE", "wrong open mode"},
    {10039, "NFS4ERR_BADOWNER", "owner not recognized"},
    {10040, "NFS4ERR_BADCHAR", "invalid character in name"},
    {10041, "NFS4ERR_BADNAME", "invalid name"},
    {10042, "NFS4ERR_BAD_RANGE", "bad byte range"},
    {10043, "NFS4ERR_LOCK_NOTSUPP", "lock type not supported"},
    {10044, "NFS4ERR_OP_ILLEGAL", "illegal operation"},
    {10045, "NFS4ERR_DEADLOCK", "deadlock"},
    {10046, "NFS4ERR_FILE_OPEN", "file is open"},
    {10047, "NFS4ERR_ADMIN_REVOKED", "state revoked by the administrator"},
    {10048, "NFS4ERR_CB_PATH_DOWN", "callback path down"},
    {10049, "NFS4ERR_BADIOMODE", "bad layout I/O mode"},
    {10050, "NFS4ERR_BADLAYOUT", "bad layout"},
    {10051, "NFS4ERR_BAD_SESSION_DIGEST", "bad session digest"},
    {10052, "NFS4ERR_BADSESSION", "unknown session"},
    {10053, "NFS4ERR_BADSLOT", "bad slot"},
    {10054, "NFS4ERR_COMPLETE_ALREADY", "reclaim already complete"},
    {10055, "NFS4ERR_CONN_NOT_BOUND_TO_SESSION", "connection not bound to session"},
    {10056, "NFS4ERR_DELEG_ALREADY_WANTED", "delegation already wanted"},
    {10057, "NFS4ERR_BACK_CHAN_BUSY", "back channel busy"},
    {10058, "NFS4ERR_LAYOUTTRYLATER", "layout unavailable, try later"},
    {10059, "NFS4ERR_LAYOUTUNAVAILABLE", "layout unavailable"},
    {10060, "NFS4ERR_NOMATCHING_LAYOUT", "no matching layout"},
    {10061, "NFS4ERR_RECALLCONFLICT", "recall conflict"},
    {10062, "NFS4ERR_UNKNOWN_LAYOUTTYPE", "unknown layout type"},
    {10063, "NFS4ERR_SEQ_MISORDERED", "slot sequence id misordered"},
    {10064, "NFS4ERR_SEQUENCE_POS", "SEQUENCE not first in COMPOUND"},
    {10065, "NFS4ERR_REQ_TOO_BIG", "request too big for the session"},
    {10066, "NFS4ERR_REP_TOO_BIG", "reply too big for the session"},
    {10067, "NFS4ERR_REP_TOO_BIG_TO_CACHE", "reply too big to cache"},
    {10068, "NFS4ERR_RETRY_UNCACHED_REP", "retry of an uncached reply"},
    {10069, "NFS4ERR_UNSAFE_COMPOUND", "unsafe COMPOUND"},
    {10070, "NFS4ERR_TOO_MANY_OPS", "too many operations in COMPOUND"},
    {10071, "NFS4ERR_OP_NOT_IN_SESSION", "operation outside a session"},
    {10072, "NFS4ERR_HASH_ALG_UNSUPP", "hash algorithm not supported"},
    {10074, "NFS4ERR_CLIENTID_BUSY", "client id busy"},
    {10075, "NFS4ERR_PNFS_IO_HOLE", "pNFS I/O hole"},
    {10076, "NFS4ERR_SEQ_FALSE_RETRY", "false retry of a slot"},
    {10077, "NFS4ERR_BAD_HIGH_SLOT", "bad highest slot id"},
    {10078, "NFS4ERR_DEADSESSION", "session is dead"},
    {10079, "NFS4ERR_ENCR_ALG_UNSUPP", "encryption algorithm not supported"},
    {10080, "NFS4ERR_PNFS_NO_LAYOUT", "no pNFS layout"},
    {10081, "NFS4ERR_NOT_ONLY_OP", "operation must be the only one in COMPOUND"},
    {10082, "NFS4ERR_WRONG_CRED", "wrong credential"},
    {10083, "NFS4ERR_WRONG_TYPE", "wrong file type"},
    {10084, "NFS4ERR_DIRDELEG_UNAVAIL", "directory delegation unavailable"},
    {10085, "NFS4ERR_REJECT_DELEG", "delegation rejected"},
    {10086, "NFS4ERR_RETURNCONFLICT", "layout return conflict"},
    {10087, "NFS4ERR_DELEG_REVOKED", "delegation revoked"},
};

const StatusInfo* find(std::uint32_t code) {
  for (const auto& s : kStatuses) {
    if (s.code == code) return &s;
  }
  return nullptr;
}

class Nfs4Category final : public std::error_category {
 public:
  const char* name() const noexcept override { return "nfs4"; }
  std::string message(int ev) const override {
    const auto code = static_cast<std::uint32_t>(ev);
    return statusName(code) + " (" + std::string(statusText(code)) + ")";
  }
};

}  // namespace

std::string statusName(std::uint32_t status) {
  if (const StatusInfo* s = find(status)) return std::string(s->name);
  return "NFS4ERR_(unknown " + std::to_string(status) + ")";
}

std::string_view statusText(std::uint32_t status) {
  if (const StatusInfo* s = find(status)) return s->text;
  return "status not defined by RFC 8881";
}

const std::error_category& nfs4Category() {
  static const Nfs4Category category;
  return category;
}

}  // namespace nfsrdma::nfs4
