# cmake -P script, run at build time (NfsrdmaManPages.cmake): writes
# nfsrdma-server.yaml(5) from configs/server.example.yaml, the example config
# that documents every key in its comments (and that the server's tests
# parse), so the page and the example cannot disagree. Inputs: EXAMPLE (the
# YAML file), OUTPUT (the page), VERSION.
file(READ "${EXAMPLE}" yaml)
# roff: a backslash is \e; a line starting with . or ' would be a request.
string(REPLACE "\\" "\\e" yaml "${yaml}")
string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" yaml "${yaml}")
file(WRITE "${OUTPUT}" ".TH NFSRDMA-SERVER.YAML 5 \"December 2026\" \"nfsrdma ${VERSION}\" \"File Formats Manual\"
.SH NAME
nfsrdma-server.yaml \\- the configuration of nfsrdma-server
.SH SYNOPSIS
.B nfsrdma-server
.RB [ doctor | plan | apply | serve ]
.I CONFIG.yaml
.SH DESCRIPTION
One YAML file describes an NFS server for NFS over RDMA: its exports and
their clients, the TCP and RDMA listeners, the nfsd versions, lease and
grace times and thread count, the RDMA device, and the svcrdma tuning.
.B nfsrdma-server plan
prints the changes
.B apply
would make to the kernel NFS server (exports, nfs.conf, modules, the port
list, threads, sysctls);
.B serve
runs nfs-ganesha with the same exports instead. Every key is optional
except
.BR exports ;
an unknown key is an error reported as file:line:column.
.PP
The annotated example below (installed as
.IR /usr/share/doc/nfsrdma/examples/server.example.yaml )
documents every key, its values and its default in its comments.
.SH EXAMPLE
.nf
${yaml}.fi
.SH SEE ALSO
.BR nfsrdma-server (8),
.BR exports (5),
.BR nfs.conf (5),
.BR nfsd (8)
")
