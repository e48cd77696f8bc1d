package checkpoint

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Checkpoint is one recorded state of the workspace.
type Checkpoint struct {
	// ID names the checkpoint (a commit of the Store's git directory);
	// Changes, Diff and Restore take it.
	ID string `json:"id"`
	// Skipped lists what the checkpoint left out, and why.
	Skipped []Skipped `json:"skipped,omitempty"`
	// Undo is, for the checkpoint a restore returns, the one recorded
	// just before it: restoring Undo undoes the restore.
	Undo string `json:"undo,omitempty"`
}

// Skipped is a file or directory a checkpoint left out.
type Skipped struct {
	Path string `json:"path"`
	// Reason says why: "larger than N bytes", "over the cap of N files".
	Reason string `json:"reason"`
}

// maxNesting bounds how deep nested repositories are followed.
const maxNesting = 8

// sizeBatch bounds the paths of one find command (well under ARG_MAX).
const sizeBatch = 64 << 10

// Snapshot records the workspace as it is now, under name (a ref of the
// Store's git directory, so that it outlives the process: "turn-3-before"),
// and returns it. Files that .gitignore, the workspace's .git/info/exclude
// or the limits leave out are not recorded; the limits' omissions are named
// in Checkpoint.Skipped. The workspace is only read.
//
// The new checkpoint is the Store's last checkpoint: the state a later
// Restore expects the workspace in (see Restore).
//
// While a Watch runs, a Snapshot first waits until the watch has seen
// every change made before it (a few milliseconds: an event of a file it
// makes in the Store's directory); when the watch has seen none since
// the previous Snapshot walked, it names the previous checkpoint again
// without a walk. Changes to the workspace's .git/info/exclude alone are
// not seen then; the next walk applies them.
func (s *Store) Snapshot(ctx context.Context, name string) (Checkpoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snapshot(ctx, name, true)
}

// snapshot records the workspace as name; last makes it the last
// checkpoint (HEAD of the git directory).
func (s *Store) snapshot(ctx context.Context, name string, last bool) (Checkpoint, error) {
	if !validName(name) {
		return Checkpoint{}, fmt.Errorf("checkpoint: %q is not a checkpoint name (letters, digits, '-', '_', '.', '/')", name)
	}
	mark, watched := s.mark(ctx)
	if watched && s.last != "" && s.quiet.st == mark.st && s.quiet.seen == mark.seen {
		// The watch saw nothing change since the last walk.
		return s.again(ctx, name, last, s.quiet.skipped)
	}
	s.quiet = quietMark{}
	defer s.walkEnds(s.walkStarts())
	if err := s.countFiles(ctx); err != nil {
		return Checkpoint{}, err
	}
	w, err := s.walk(ctx)
	if err != nil {
		return Checkpoint{}, err
	}
	var skipped []Skipped
	update, drop, err := s.admit(ctx, w, &skipped)
	if err != nil {
		return Checkpoint{}, err
	}
	var cp Checkpoint
	if len(update) == 0 && len(drop) == 0 && s.last != "" {
		cp, err = s.again(ctx, name, last, skipped)
	} else {
		if len(drop) > 0 {
			if _, err := s.git(ctx, zList(drop), "update-index", "-z", "--force-remove", "--stdin"); err != nil {
				return Checkpoint{}, err
			}
		}
		cp, err = s.commit(ctx, name, update, last, "")
		cp.Skipped = skipped
	}
	if err == nil && watched {
		s.quiet = quietMark{st: mark.st, seen: mark.seen, skipped: skipped}
	}
	return cp, err
}

// again names the checkpoint the index holds (nothing changed since it
// was recorded) name as well.
func (s *Store) again(ctx context.Context, name string, last bool, skipped []Skipped) (Checkpoint, error) {
	if err := s.setRefs(ctx, name, s.last, last); err != nil {
		return Checkpoint{}, err
	}
	if last {
		s.head = s.last
	}
	return Checkpoint{ID: s.last, Skipped: skipped}, nil
}

// commit records a checkpoint named name: tree, or when tree is "" the
// index after update-index adds, changes or removes update. last makes it
// the last checkpoint. Over SSH one command does it all (commitScript),
// in one round trip; on this machine each step is a git of its own.
func (s *Store) commit(ctx context.Context, name string, update []string, last bool, tree string) (Checkpoint, error) {
	prev := ""
	if last {
		prev = s.head
	}
	var cp Checkpoint
	var diff []byte
	if s.ownRefs {
		// On this machine: commitScript's steps, each its own git, and no
		// shell (a process fewer).
		var err error
		if cp.ID, diff, err = s.commitLocal(ctx, name, update, tree, prev); err != nil {
			return Checkpoint{}, err
		}
		if err := s.setRefs(ctx, name, cp.ID, last); err != nil {
			return Checkpoint{}, err
		}
	} else {
		changed, head := "0", "0"
		if len(update) > 0 {
			changed = "1"
		}
		if last {
			head = "1"
		}
		args := append([]string{"sh", "-c", commitScript, "sh", name, changed, head, tree, prev}, s.gitArgs()[1:]...)
		out, err := s.opt.Runner.Run(ctx, args, s.env, zList(update))
		if err != nil {
			return Checkpoint{}, s.fail("recording checkpoint "+name, err)
		}
		id, d, _ := bytes.Cut(out, []byte{0})
		cp.ID, diff = string(id), d
	}
	if tree == "" {
		s.last = cp.ID
	}
	if last {
		s.head = cp.ID
		if prev != "" {
			s.diff = cachedDiff{from: prev, to: cp.ID, raw: diff}
		}
	}
	return cp, nil
}

// commitLocal is commitScript without the refs, each step a git process
// of its own: it returns the commit, and the changes from prev when prev
// is not "".
func (s *Store) commitLocal(ctx context.Context, name string, update []string, tree, prev string) (string, []byte, error) {
	if len(update) > 0 {
		if _, err := s.git(ctx, zList(update), "update-index", "-z", "--add", "--remove", "--stdin"); err != nil {
			return "", nil, err
		}
	}
	if tree == "" {
		out, err := s.git(ctx, nil, "write-tree")
		if err != nil {
			return "", nil, err
		}
		tree = strings.TrimSpace(string(out))
	}
	out, err := s.git(ctx, nil, "commit-tree", "-m", name, tree)
	if err != nil {
		return "", nil, err
	}
	id := strings.TrimSpace(string(out))
	if prev == "" {
		return id, nil, nil
	}
	// As in the script, diff-tree reads no index.
	env := append(slices.Clip(s.env), "GIT_INDEX_FILE="+s.opt.Dir+"/no-index")
	diff, err := s.opt.Runner.Run(ctx, s.gitArgs("diff-tree", "-r", "-z", "-M", "--raw", "--numstat", "--no-textconv", "--no-ext-diff", prev, id), env, nil)
	if err != nil {
		return "", nil, s.fail("git diff-tree", err)
	}
	return id, diff, nil
}

// commitScript updates the private index from the paths on its stdin when
// $2 is 1, writes the index's tree unless $4 names one, commits it, writes
// the refs (refs/acphost/$1, and HEAD, the last checkpoint, when $3 is 1)
// and prints the commit; then, when $5 names the previous last
// checkpoint, a NUL and the changes from it (as Changes reads them), which
// a turn's end asks for next. Its other arguments are git's settings. It
// is for a Store whose commands go to another host (one round trip) or
// whose refs git must write; a local Store runs its steps itself
// (commitLocal, setRefs), sparing the shell and two processes per ref.
//
// The refs are written as git's loose ref files are (gitrepository-layout:
// the ID and a newline, through NAME.lock, which git's own writers also
// take, and a rename), sparing a git process per checkpoint; HEAD is a
// detached ID. A git directory with another ref storage (reftable) gets
// update-ref. diff-tree reads no index (it compares two commits; with one
// it would read all of the private index to look for .gitattributes).
const commitScript = `set -e
n=$1; u=$2; h=$3; t=$4; p=$5; shift 5
if [ "$u" = 1 ]; then git "$@" update-index -z --add --remove --stdin; fi
if [ -z "$t" ]; then t=$(git "$@" write-tree); fi
c=$(git "$@" commit-tree -m "$n" "$t")
` + writeRefs + `
printf '%s' "$c"
if [ -n "$p" ]; then printf '\000'; GIT_INDEX_FILE=$GIT_DIR/no-index git "$@" diff-tree -r -z -M --raw --numstat --no-textconv --no-ext-diff "$p" "$c"; fi`

// writeRefs, a part of the scripts that write refs, writes
// refs/acphost/$n = $c, and HEAD = $c when $h is 1.
const writeRefs = `setref() {
	f=$GIT_DIR/$1
	[ -d "${f%/*}" ] || mkdir -p "${f%/*}"
	set -C; printf '%s\n' "$2" > "$f.lock"; set +C
	mv -f "$f.lock" "$f"
}
if [ -d "$GIT_DIR/reftable" ]; then
	{ printf 'update refs/acphost/%s %s\n' "$n" "$c"; if [ "$h" = 1 ]; then printf 'option no-deref\nupdate HEAD %s\n' "$c"; fi; } | git "$@" update-ref --stdin
else
	setref "refs/acphost/$n" "$c"
	if [ "$h" = 1 ]; then setref HEAD "$c"; fi
fi`

// refsScript names the checkpoint $2 refs/acphost/$1, and HEAD when $3 is
// 1; its other arguments are git's settings.
const refsScript = `set -e
n=$1; c=$2; h=$3; shift 3
` + writeRefs

// setRefs names checkpoint id refs/acphost/name, and HEAD (the last
// checkpoint) when last and HEAD is not id already: in this process when
// it can (Store.ownRefs), else with a script.
func (s *Store) setRefs(ctx context.Context, name, id string, last bool) error {
	last = last && s.head != id
	if !s.ownRefs {
		h := "0"
		if last {
			h = "1"
		}
		args := append([]string{"sh", "-c", refsScript, "sh", name, id, h}, s.gitArgs()[1:]...)
		if _, err := s.opt.Runner.Run(ctx, args, s.env, nil); err != nil {
			return s.fail("recording checkpoint "+name, err)
		}
		return nil
	}
	err := s.setRef("refs/acphost/"+name, id)
	if err == nil && last {
		err = s.setRef("HEAD", id)
	}
	if err != nil {
		return fmt.Errorf("checkpoint: recording checkpoint %s in %s: %w", name, s.opt.Workspace, err)
	}
	return nil
}

// setRef writes a loose ref file of the Store's git directory as git's
// own writers do: the ID and a newline into NAME.lock (created
// exclusively, so a concurrent git writer fails rather than interleaves),
// then a rename over NAME.
func (s *Store) setRef(ref, id string) error {
	f := filepath.Join(s.opt.Dir, filepath.FromSlash(ref))
	if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
		return err
	}
	lock, err := os.OpenFile(f+".lock", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = lock.WriteString(id + "\n")
	if cerr := lock.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f+".lock", f)
	}
	if err != nil {
		_ = os.Remove(f + ".lock")
	}
	return err
}

// walked is what one walk of the workspace found against the private
// index: new files, changed ones and deleted ones.
type walked struct {
	others, modified, deleted []string
}

// walk lists the workspace's new, changed and deleted files against the
// private index, with the ignore rules applied, in one git status (which
// refreshes the index's file times, so a file touched but unchanged is
// not read again). New directories are listed whole, and nested
// repositories (which git lists as "dir/" again) followed.
func (s *Store) walk(ctx context.Context) (walked, error) {
	s.walks++
	var w walked
	out, err := s.git(ctx, nil, "status", "--porcelain=v1", "-z", "--untracked-files=normal", "--no-renames", "--ignore-submodules=all")
	if err != nil {
		return w, err
	}
	var dirs []string
	for _, e := range splitZ(out) {
		if len(e) < 4 {
			continue
		}
		code, p := e[:2], e[3:]
		switch {
		case code == "??" && strings.HasSuffix(p, "/"):
			dirs = append(dirs, p)
		case code == "??":
			w.others = append(w.others, p)
		case code[1] == 'D':
			w.deleted = append(w.deleted, p)
		case code[1] == 'M' || code[1] == 'T':
			w.modified = append(w.modified, p)
		}
	}
	if len(dirs) == 0 {
		return w, nil
	}
	out, err = s.git(ctx, nil, append([]string{"ls-files", "-z", "-o", "--exclude-standard", "--"}, dirs...)...)
	if err != nil {
		return w, err
	}
	var nested []string
	for _, p := range splitZ(out) {
		if strings.HasSuffix(p, "/") {
			nested = append(nested, p)
		} else {
			w.others = append(w.others, p)
		}
	}
	more, err := s.walkNested(ctx, nested, 0)
	w.others = append(w.others, more...)
	return w, err
}

// walkNested lists the files of nested repositories (and submodules) that
// the private index does not know yet: git does not enter a directory with
// a .git of its own, unless the index has files under it, so the first
// files are found by a walk with that directory as the work tree. Their
// .git stays out, like the workspace's.
func (s *Store) walkNested(ctx context.Context, dirs []string, depth int) ([]string, error) {
	var files []string
	for _, dir := range dirs {
		if depth >= maxNesting {
			break
		}
		env := append(append([]string(nil), s.env...),
			"GIT_WORK_TREE="+s.opt.Workspace+"/"+strings.TrimSuffix(dir, "/"),
			"GIT_INDEX_FILE="+s.opt.Dir+"/nested-index-never-written")
		out, err := s.opt.Runner.Run(ctx, s.gitArgs("ls-files", "-z", "-o", "--exclude-standard"), env, nil)
		if err != nil {
			return nil, s.fail("listing the nested repository "+dir, err)
		}
		var deeper []string
		for _, p := range splitZ(out) {
			if strings.HasSuffix(p, "/") {
				deeper = append(deeper, dir+p)
			} else {
				files = append(files, dir+p)
			}
		}
		more, err := s.walkNested(ctx, deeper, depth+1)
		if err != nil {
			return nil, err
		}
		files = append(files, more...)
	}
	return files, nil
}

// admit applies the limits to what the walk found and returns the paths
// for update-index: deleted files, files changed or new under the size
// cap, new files under the count cap; and the paths to drop: a changed
// file now over the size cap leaves the index (the checkpoint does not
// hold it).
func (s *Store) admit(ctx context.Context, w walked, skipped *[]Skipped) (update, drop []string, err error) {
	big, err := s.bigFiles(ctx, append(append([]string(nil), w.modified...), w.others...))
	if err != nil {
		return nil, nil, err
	}
	update = append(update, w.deleted...)
	s.files -= len(w.deleted)
	tooBig := "larger than " + strconv.FormatInt(s.opt.MaxFileSize, 10) + " bytes"
	for _, p := range w.modified {
		if big[p] {
			*skipped = append(*skipped, Skipped{Path: p, Reason: tooBig})
			drop = append(drop, p)
			s.files--
		} else {
			update = append(update, p)
		}
	}
	for _, p := range w.others {
		switch {
		case big[p]:
			*skipped = append(*skipped, Skipped{Path: p, Reason: tooBig})
		case s.files >= s.opt.MaxFiles:
			*skipped = append(*skipped, Skipped{Path: p, Reason: "over the cap of " + strconv.Itoa(s.opt.MaxFiles) + " files"})
		default:
			s.files++
			update = append(update, p)
		}
	}
	return update, drop, nil
}

// bigFiles finds which of paths are regular files over the size cap, with
// find(1) on the host, or lstat on this machine for Local (symlinks are
// not followed).
func (s *Store) bigFiles(ctx context.Context, paths []string) (map[string]bool, error) {
	big := map[string]bool{}
	if _, local := s.opt.Runner.(Local); local {
		for _, p := range paths {
			if info, err := os.Lstat(filepath.Join(s.opt.Workspace, filepath.FromSlash(p))); err == nil && info.Mode().IsRegular() && info.Size() > s.opt.MaxFileSize {
				big[p] = true
			}
		}
		return big, nil
	}
	size := "+" + strconv.FormatInt(s.opt.MaxFileSize, 10) + "c"
	// find's primaries follow the paths; "./" keeps a path that starts
	// with '-' or '(' from reading as one.
	const script = `cd "$1" || exit 1; s=$2; shift 2; find "$@" -prune -type f -size "$s" -print0 2>/dev/null; exit 0`
	for len(paths) > 0 {
		args := []string{"sh", "-c", script, "sh", s.opt.Workspace, size}
		n := 0
		for len(paths) > 0 && n < sizeBatch {
			args = append(args, "./"+paths[0])
			n += len(paths[0]) + 3
			paths = paths[1:]
		}
		out, err := s.opt.Runner.Run(ctx, args, nil, nil)
		if err != nil {
			return nil, s.fail("measuring files", err)
		}
		for _, p := range splitZ(out) {
			big[strings.TrimPrefix(p, "./")] = true
		}
	}
	return big, nil
}

// countFiles counts the private index's entries, once per Store.
func (s *Store) countFiles(ctx context.Context) error {
	if s.counted {
		return nil
	}
	out, err := s.git(ctx, nil, "ls-files", "-z")
	if err != nil {
		return err
	}
	s.files, s.counted = bytes.Count(out, []byte{0}), true
	return nil
}

// zList joins paths NUL-terminated, for a --stdin -z.
func zList(paths []string) []byte {
	var b []byte
	for _, p := range paths {
		b = append(append(b, p...), 0)
	}
	return b
}

// splitZ splits NUL-terminated output.
func splitZ(out []byte) []string {
	var list []string
	for len(out) > 0 {
		i := bytes.IndexByte(out, 0)
		if i < 0 {
			i = len(out)
		}
		list = append(list, string(out[:i]))
		out = out[min(i+1, len(out)):]
	}
	return list
}

// validName reports whether name makes a plain ref name.
func validName(name string) bool {
	if name == "" || strings.Contains(name, "..") || strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") || strings.HasSuffix(name, ".lock") {
		return false
	}
	for _, r := range name {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("-_./", r)) {
			return false
		}
	}
	return true
}

// hashName names a workspace's default git directory.
func hashName(workspace string) string {
	sum := sha256.Sum256([]byte(workspace))
	return hex.EncodeToString(sum[:12])
}
