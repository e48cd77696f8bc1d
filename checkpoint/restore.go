package checkpoint

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ConflictError is the error of a restore that would overwrite a change
// made since the Store's last checkpoint (the end of the last turn, say):
// Paths differ between that checkpoint and the workspace, or changed while
// the restore ran. Nothing was changed.
type ConflictError struct {
	Paths []string
}

func (e *ConflictError) Error() string {
	const show = 5
	list := e.Paths
	more := ""
	if len(list) > show {
		more = fmt.Sprintf(" and %d more", len(list)-show)
		list = list[:show]
	}
	return fmt.Sprintf("checkpoint: restore refused: %q%s changed since the last checkpoint (force it to overwrite)", list, more)
}

// Restore brings the files that differ between checkpoint to and the last
// checkpoint (the latest Snapshot, say the end of the last turn) back to
// their state in to. A file the restore would change that also differs
// between the last checkpoint and the workspace (the user edited it
// since) is a *ConflictError and nothing changes, unless force. Files
// neither checkpoint holds (ignored, skipped) are never touched. After a
// restore, the last checkpoint is the last one with the restored files as
// to has them, so the user's own changes stay theirs for the next one.
//
// Before it changes anything, Restore records the workspace; it returns
// the checkpoint of the restored state, whose Undo is that first one:
// restoring Undo undoes the restore. Content, symlinks and the executable
// bit come back as recorded; other permission bits follow the host's
// umask.
func (s *Store) Restore(ctx context.Context, to string, force bool) (Checkpoint, error) {
	return s.restore(ctx, to, nil, force)
}

// RevertFile is Restore for one file: it brings path back to its state in
// checkpoint to (removing it if to has none), unless the user changed it
// since the last checkpoint (a *ConflictError, unless force).
func (s *Store) RevertFile(ctx context.Context, path, to string, force bool) (Checkpoint, error) {
	if path == "" {
		return Checkpoint{}, fmt.Errorf("checkpoint: revert: no path")
	}
	return s.restore(ctx, to, []string{path}, force)
}

func (s *Store) restore(ctx context.Context, to string, only []string, force bool) (Checkpoint, error) {
	revs, err := revisions(to)
	if err != nil {
		return Checkpoint{}, err
	}
	to = revs[0]
	s.mu.Lock()
	defer s.mu.Unlock()
	out, err := s.git(ctx, nil, "rev-parse", "-q", "--verify", "HEAD^{commit}")
	if err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint: restore: nothing recorded yet: %w", err)
	}
	end := strings.TrimSpace(string(out))
	s.restores++
	name := "restore-" + strconv.FormatInt(time.Now().UnixNano(), 10) + "-" + strconv.Itoa(s.restores)
	undo, err := s.snapshot(ctx, name+"-undo", false)
	if err != nil {
		return Checkpoint{}, err
	}
	paths := only
	if paths == nil {
		if paths, err = s.differ(ctx, to, end); err != nil {
			return Checkpoint{}, err
		}
	}
	if !force && len(paths) > 0 {
		since, err := s.differ(ctx, end, undo.ID)
		if err != nil {
			return Checkpoint{}, err
		}
		if clash := intersect(paths, since); len(clash) > 0 {
			return Checkpoint{}, &ConflictError{Paths: clash}
		}
	}
	if err := s.apply(ctx, undo.ID, to, paths, force); err != nil {
		return Checkpoint{}, err
	}
	// The index holds the restored tree, fresh: record it without a walk.
	done, err := s.commit(ctx, name, nil, false, "")
	if err != nil {
		return Checkpoint{}, err
	}
	done.Undo = undo.ID
	// The last checkpoint becomes what the workspace would be had nobody
	// changed it since: the user's own changes stay changes, which a later
	// restore does not overwrite unasked.
	expected, err := s.mixTree(ctx, end, to, paths)
	if err != nil {
		return Checkpoint{}, err
	}
	if _, err := s.commit(ctx, name+"-expected", nil, true, expected); err != nil {
		return Checkpoint{}, err
	}
	return done, nil
}

// apply moves the workspace from checkpoint base (which the index holds)
// to base with paths as checkpoint to has them.
func (s *Store) apply(ctx context.Context, base, to string, paths []string, force bool) error {
	if len(paths) == 0 {
		return nil
	}
	s.last = "" // the index will hold another tree
	s.quiet = quietMark{}
	s.counted = false // and another count of files
	target, err := s.mixTree(ctx, base, to, paths)
	if err != nil {
		return err
	}
	if force {
		_, err = s.git(ctx, nil, "read-tree", "--reset", "-u", target)
		return err
	}
	// A two-tree read-tree moves the workspace from the state just
	// recorded to target, and refuses if a file changed in between (a
	// command still running) or an unrecorded file is in the way.
	if _, err := s.git(ctx, nil, "read-tree", "-m", "-u", base, target); err != nil {
		if clash := readTreeClash(err.Error()); len(clash) > 0 {
			return &ConflictError{Paths: clash}
		}
		return err
	}
	return nil
}

// differ lists the paths that differ between two checkpoints, renames
// split into a deletion and an addition.
func (s *Store) differ(ctx context.Context, a, b string) ([]string, error) {
	out, err := s.git(ctx, nil, "diff-tree", "-r", "-z", "--no-renames", "--name-only", a, b)
	if err != nil {
		return nil, err
	}
	return splitZ(out), nil
}

// mixTree writes the tree that is base with paths as checkpoint from has
// them (absent where from has none), in a scratch index.
func (s *Store) mixTree(ctx context.Context, base, from string, paths []string) (string, error) {
	out, err := s.git(ctx, nil, append([]string{"ls-tree", "-r", "-z", "--full-tree", from, "--"}, paths...)...)
	if err != nil {
		return "", err
	}
	has := map[string]bool{}
	var info []byte
	for _, e := range splitZ(out) {
		if _, p, ok := strings.Cut(e, "\t"); ok {
			has[p] = true
		}
		info = append(append(info, e...), 0)
	}
	for _, p := range paths {
		if !has[p] {
			info = append(append(info, "0 0000000000000000000000000000000000000000\t"+p...), 0)
		}
	}
	const script = `set -e; export GIT_INDEX_FILE="$GIT_DIR/restore-index"; rm -f "$GIT_INDEX_FILE"
b=$1; shift
git "$@" read-tree "$b"
git "$@" update-index -z --index-info
git "$@" write-tree
rm -f "$GIT_INDEX_FILE"`
	// The scratch index is not split: only the Store's own index is, and
	// a split index's writes clean up the shared files it does not use.
	args := append(append([]string{"sh", "-c", script, "sh", base}, s.gitArgs()[1:]...), "-c", "core.splitIndex=false")
	tree, err := s.opt.Runner.Run(ctx, args, s.env, info)
	if err != nil {
		return "", s.fail("preparing the restore", err)
	}
	return strings.TrimSpace(string(tree)), nil
}

// readTreeClash reads the paths out of read-tree's refusals ("Entry 'x'
// not uptodate. Cannot merge.", "The following untracked working tree
// files would be overwritten by merge:" followed by tab-indented paths).
func readTreeClash(msg string) []string {
	var list []string
	lines := strings.Split(msg, "\n")
	for i, line := range lines {
		if strings.Contains(line, "would be overwritten") || strings.Contains(line, "would be removed") {
			for _, next := range lines[i+1:] {
				if !strings.HasPrefix(next, "\t") {
					break
				}
				list = append(list, strings.TrimPrefix(next, "\t"))
			}
		}
		if _, b, ok := strings.Cut(line, "error: Entry '"); ok {
			if p, _, ok := strings.Cut(b, "' not uptodate"); ok {
				list = append(list, p)
			}
		}
	}
	return list
}

// intersect lists what is in both a and b, in a's order.
func intersect(a, b []string) []string {
	in := make(map[string]bool, len(b))
	for _, p := range b {
		in[p] = true
	}
	var both []string
	for _, p := range a {
		if in[p] {
			both = append(both, p)
		}
	}
	return both
}
