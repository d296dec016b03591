// The TCP record-marking fuzz harness (fuzz_tcp_records), shared with the
// unit test that replays its corpus: what a server sends is fed to the TCP
// transport's byte-fed RecordReader (in pieces of 6 KiB, so records also
// arrive split; small pieces, a 4 KiB starting buffer and a 64 KiB maximum
// record keep an input cheap), with some READ calls' buffers registered for
// direct placement first; then the stream ends. Whatever arrives, the reader must
// deliver whole records (or placed ones whose length is a registered
// buffer's), stop at its first error, end with an error that says why (the
// stream ended, or a fragment over the maximum), and never touch memory it
// does not own (ASan).
//
// Input layout (bytes are consumed in order; missing bytes read as 0):
//   byte              k = byte % 4 READ calls registered for placement
//   k x 6 bytes       their XID (4, big-endian) and buffer size 16 KiB + 8 x ((2) % 2048)
//   then commands until the input ends, each one byte op % 4 and its operands:
//     0  raw:         n (1 byte), then n bytes appended as they are
//     1  READ reply:  registration j (1 byte), header length h (1 byte), h
//                     header bytes, a flag byte (bit 0: the data length is the
//                     registered size, else 2 more bytes give it), then a
//                     record marked last holding XID, header, length, data, pad
//     2  big marker:  4 bytes of record marker, then min(marker length,
//                     64 KiB) filler bytes
//     3  filler:      2 bytes count, min(count, 256) x 16 zero bytes
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace nfsrdma::fuzz {

struct TcpRecordsOutcome {
  // Replies the input describes that direct placement may take (a single
  // last fragment with a registered XID and that buffer's size): what the
  // input means, whatever the timing.
  std::size_t placeable = 0;
  // Replies the reader did place (fewer when one arrived whole).
  std::size_t placed = 0;
};

// Returns false if the reader broke an invariant (the fuzz target aborts
// then). `outcome`, if given, says what the input offered to direct
// placement and what was placed (the replay test checks placement seeds).
bool runTcpRecords(std::span<const std::uint8_t> input, TcpRecordsOutcome* outcome = nullptr);

}  // namespace nfsrdma::fuzz
