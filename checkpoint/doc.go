// Package checkpoint records a workspace's states with git and brings them
// back: a checkpoint before and after every turn of an agent, the files
// and lines a turn changed, its unified diff, and a restore that can
// itself be undone. It runs git where the files are, on this machine or on
// an SSH host over an existing connection (Runner), and never touches the
// user's own repository.
//
// # Why git, and how
//
// git is on every developer machine and on every host agents run on, it
// reads a tree of tens of thousands of files in the time of a git status,
// stores each content once, and its diff, rename detection and checkout
// are the ones users trust. A Store keeps its own git directory (Options.Dir,
// by default under the host's cache directory, never in the workspace)
// and index, and points git at the workspace as its work tree with
// GIT_DIR, GIT_WORK_TREE and GIT_INDEX_FILE. A checkpoint is a commit of
// that private index, named by a ref of the private directory
// (refs/acphost/NAME), so it outlives the process; its ID is the commit's
// hash. The user's .git (its index, HEAD, branches, stash, hooks, config)
// is neither read nor written; only its info/exclude file is read, as
// ignore rules. A workspace that is not a repository works the same, and a
// repository in the middle of a rebase or a merge is just files.
//
// git runs with no system or global configuration, a HOME of the Store's
// own, hooks off (core.hooksPath=/dev/null), no file-system monitor, and
// attributes that turn off end-of-line conversion, filters and keyword
// expansion: a restore gives back the bytes that were recorded.
//
// # What a checkpoint holds
//
// The files git would see as tracked or untracked in the workspace: what
// the .gitignore files in it and the workspace's .git/info/exclude ignore
// is left out, and so are the .git directories themselves. A workspace
// that is a subdirectory of a repository is recorded on its own: the
// .gitignore files above it are not read. Symlinks are recorded as symlinks
// (their target text), never followed, wherever they point. A nested
// repository or a submodule's work tree is recorded file by file, with its
// own .gitignore files but without its .git; a restore changes its files,
// never its .git. Empty directories are not recorded. Files over
// Options.MaxFileSize, and new files past Options.MaxFiles, are left out
// and named in Checkpoint.Skipped; a recorded file that grows past the cap
// leaves the next checkpoint (Changes then lists it as deleted, Skipped
// says why).
//
// Paths are the bytes of the names, slash-separated: a name that is not
// UTF-8 is recorded, listed and restored as it is, and a Go string holds
// it unchanged; encoded as JSON its invalid bytes become U+FFFD, so an app
// that shows such a name cannot send it back through JSON.
//
// Only the workspace is recorded: what an agent changes outside it (a
// granted directory elsewhere, the home directory, a database) is not.
//
// # Restores
//
// Restore and RevertFile change only the files that differ between the
// checkpoint restored and the Store's last checkpoint (the latest
// Snapshot), first recording the workspace so the restore can be undone.
// A file the user changed since the last checkpoint is a conflict, and
// so is one that changes while the restore runs: git's two-tree read-tree
// refuses to overwrite a file that is not as it was just recorded. A
// conflict changes nothing. A restore on a read-only file system fails
// with git's error, after recording; a host without git fails Open with
// ErrNoGit.
//
// # Live reports
//
// Watch follows the workspace while a turn runs, for a UI to show files
// as they change; the checkpoints stay the record (and use it: see
// Cost). It asks git
// (check-ignore, one command for many paths, answers remembered) what the
// checkpoints would ignore, and leaves it out. On this machine it uses
// fsnotify: one inotify watch per directory that is not ignored, added as
// directories appear (their files listed then, since they may have been
// made before the watch was), at most Options.MaxWatchedDirs. SFTP has no
// notifications, so on an SSH host it runs inotifywait(1) from
// inotify-tools over the runner's connection, after counting the
// directories against the same cap; a new directory's files are listed
// with find(1). A host without inotifywait (not Linux, or the package
// not installed) has no live reports: Watch says so (exec.ErrNotFound)
// and the checkpoints work as ever. inotifywait watches what .gitignore
// ignores too (only .git is left out), so ignored directories count
// against the cap there.
//
// # Cost
//
// A snapshot is one git status of the private index (whose untracked
// cache lets git skip the directories that did not change), the sizes of
// new and changed files (lstat with Local, find(1) through other
// runners), and one sh running update-index, write-tree, commit-tree and
// the diff from the last checkpoint, which Changes then answers without
// git; the refs are written as git's loose ref files, and the index is
// split and in version 4, so each command reads and writes less of it. A
// snapshot that finds nothing changed only names the previous checkpoint
// again. Over SSH that is two or three round trips. While a Watch runs,
// a snapshot with nothing changed since the previous one is not even a
// walk: the watch, told by an event of a file made in the Store's own
// directory that it has seen everything up to now, says nothing changed,
// and the snapshot only names the previous checkpoint (a session's
// checkpoint before a turn, when the user waited for the agent).
// BenchmarkTurnOverhead measures a turn's end against git status on a
// tree of 20,000 files. Memory is bounded by the list of paths that
// changed (the first snapshot: all of them), never by their content,
// which git streams to its object store; the size cap keeps big files
// out of it.
package checkpoint
