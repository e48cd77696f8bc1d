// Package fsroot decides what an ACP agent may read and write for one
// session, and does the reading and writing: fs/read_text_file and
// fs/write_text_file are served from a Root, either Local (this machine) or
// SFTP (an SSH host, over github.com/pkg/sftp).
//
// # Confinement
//
// Agents send absolute paths. A Root accepts a path only when, after
// cleaning ".." and resolving every symlink, it lies inside the session's
// cwd or one of its granted external directories; the root directories are
// resolved the same way when they are set. A path that does not exist yet
// (a new file, maybe in new directories) is judged by its nearest existing
// parent, so a symlinked directory cannot smuggle a new file outside. The
// resolution is done component by component through the backend (lstat and
// readlink), identically for both roots, because an SFTP server's realpath
// does not always follow links. A path that does not even lexically start
// inside a root is refused before any file-system call, so a refusal says
// nothing about what exists elsewhere. Local then opens the resolved path
// through an os.Root of the directory that contains it, which also closes
// the gap between the check and the use; SFTP cannot, and says so.
//
// Refusals are *PathError values that name the operation and the path and
// wrap a sentinel (ErrOutsideRoot, ErrNotAbsolute, ErrTooLarge, ErrReadOnly,
// ErrNotRegular, ErrNotText, ...), so a caller branches with errors.Is; a missing file
// satisfies errors.Is(err, fs.ErrNotExist), which ACP reports as -32002.
// Grants change while the session lives (SetGrants, AddGrant, RemoveGrant);
// a removed grant is refused by every operation that starts afterwards.
// The write gate (SetReadOnly) is how a host's Ask, Plan and read-only
// policies turn writes off, with the reason in the refusal. A root given to
// a bridge.Session is driven by it: the session sets the gate from its
// policy and the grants from its list of external directories, so change
// them there (Session.SetPolicy, Session.SetGrants), not on the root.
//
// # Reads and writes
//
// Text is returned byte for byte as stored: no decoding, BOM and CRLF kept,
// and line/limit slicing keeps each line's own ending. A file that is not
// valid UTF-8 is refused (ErrNotText, with the offset of the first bad
// byte) rather than served with U+FFFD in place of its bytes, which an agent
// saving the text back would make permanent. Reads are capped (16 MiB by
// default) so an agent cannot pull a huge file into memory, and only
// regular files are read (opening a FIFO would hang). Writes are capped too
// (Options.MaxWriteSize, by default the read cap, so nothing is written
// that could not be read back); an over-cap write is refused before
// anything is written. An Overlay lets the host serve unsaved editor
// buffers, as ACP asks; overlay reads are confined and sliced like disk
// reads, and OnWrite tells the host when a write landed on disk.
//
// A file is read in pieces, each checked for UTF-8 while it is in the
// cache (a vector at a time on amd64) and appended to a buffer grown to the
// file's size and never zeroed, so a local read keeps up with os.ReadFile
// and the file is in memory once. An SFTP read of more than 32 MiB asks
// for a garbage collection every 32 MiB: pkg/sftp and x/crypto/ssh
// allocate every packet, and their garbage would otherwise reach the size
// of the file before the collector ran.
//
// An SFTP transfer keeps 2 MiB of requests in flight, the SSH channel
// window: 64 of 32 KiB, the size every server answers in full, or, on a
// server that offers limits@openssh.com (OpenSSH's since 8.6), 8 of
// 255 KiB, which that server answers in full too and which cost less per
// byte on both sides, as OpenSSH's own sftp does with it.
//
// An existing file is replaced only if this user may write it: the rename
// needs only the directory's permission, so the file is first opened for
// writing (without truncation) and closed, locally through the os.Root and
// on SFTP by the server, as the remote user. A refusal satisfies
// errors.Is(err, fs.ErrPermission) and leaves the file alone.
//
// Writes are atomic: a temporary file in the target's directory gets the
// old file's mode (or Options.FileMode) before any content, then the
// content and an fsync, and is renamed over the target; a failure at any
// step leaves the old file untouched and removes the temporary. On SFTP the
// rename uses posix-rename@openssh.com, which replaces the target in one
// step. Without it, a plain SFTP rename is tried first; OpenSSH refuses to
// rename over an existing file, so the old file is then moved to a backup
// name, the new one moved in, and the backup removed (or moved back if the
// second rename fails). Readers may see no file for an instant there, never
// a partial one. fsync is skipped on servers without fsync@openssh.com.
//
// This is the module's one atomic write. A root on "/" confines nothing,
// and is how a host writes its own files (a session store, an agent's
// settings) locally or over SFTP with the same guarantees.
//
// # Watching
//
// Watch lets a host refresh its views when the agent (or anything else)
// changes files. Local uses fsnotify, adds new subdirectories as they
// appear, and merges each burst of events per path for Options.Debounce.
// SFTP has no notifications, so it polls: each poll lists at most
// Options.PollMaxEntries directory entries and carries on where it stopped,
// so the cost per poll stays bounded on a huge tree.
//
// # SSH
//
// fsroot does no dialling: an SFTP root takes the connection it is given,
// in x/crypto's own type. NewSFTP takes an *ssh.Client and uses it as is
// (if it dies, operations fail with ErrConnectionLost). NewSFTPConn takes
// an SSHConn, anything whose Client method hands out the client to use
// now, and asks it again after a drop, so the root recovers on its next
// operation; github.com/acphost/acphost/sshconn's Conn is one, and dials
// with host-key verification, ssh-agent keys and keepalives. Anything else
// that needs the host, such as an agent process launched over SSH, can
// share the same connection.
//
// Paths are POSIX paths; Windows is not supported yet.
package fsroot
