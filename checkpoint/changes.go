package checkpoint

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// Change is one file that differs between two checkpoints.
type Change struct {
	// Status is "A" (added), "M" (modified: content, mode or type), "D"
	// (deleted) or "R" (renamed, maybe also modified).
	Status string `json:"status"`
	// Path is the file's path in the workspace, slash-separated; for a
	// rename, its new path. It holds the name's bytes as they are, which
	// need not be UTF-8 (see the package doc).
	Path string `json:"path"`
	// OldPath is a renamed file's former path.
	OldPath string `json:"oldPath,omitempty"`
	// Added and Removed count the lines added and removed; Binary says
	// the file is not text, and then both are 0.
	Added   int  `json:"added"`
	Removed int  `json:"removed"`
	Binary  bool `json:"binary,omitempty"`
}

// Changes lists the files that differ from checkpoint from to checkpoint
// to, renames detected, with their line counts, in path order. Like every
// method that takes checkpoints, it takes their IDs or the names they
// were recorded under.
func (s *Store) Changes(ctx context.Context, from, to string) ([]Change, error) {
	revs, err := revisions(from, to)
	if err != nil {
		return nil, err
	}
	if revs[0] == revs[1] {
		return nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.diff.from == revs[0] && s.diff.to == revs[1] {
		return parseChanges(splitZ(s.diff.raw))
	}
	out, err := s.git(ctx, nil, "diff-tree", "-r", "-z", "-M", "--raw", "--numstat", "--no-textconv", "--no-ext-diff", revs[0], revs[1])
	if err != nil {
		return nil, err
	}
	return parseChanges(splitZ(out))
}

// Diff returns the unified diff from checkpoint from to checkpoint to,
// renames detected, limited to paths when any are given. Paths are
// literal, not patterns.
func (s *Store) Diff(ctx context.Context, from, to string, paths ...string) (string, error) {
	revs, err := revisions(from, to)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	args := append([]string{"diff-tree", "-r", "-p", "-M", "--no-color", "--no-textconv", "--no-ext-diff", revs[0], revs[1], "--"}, paths...)
	out, err := s.git(ctx, nil, args...)
	return string(out), err
}

// parseChanges reads diff-tree's -z --raw --numstat output: the raw
// records (":modes shas STATUS", then one path, or two for a rename) and
// then the numstat ones ("added\tremoved\tpath", or "added\tremoved\t"
// then two paths for a rename).
func parseChanges(tok []string) ([]Change, error) {
	var list []Change
	at := map[string]int{} // a change's index by its path
	for len(tok) > 0 {
		head := tok[0]
		if strings.HasPrefix(head, ":") {
			fields := strings.Fields(head)
			if len(fields) != 5 || len(tok) < 2 {
				return nil, fmt.Errorf("checkpoint: unexpected diff record %q", head)
			}
			c := Change{Status: fields[4][:1], Path: tok[1]}
			tok = tok[2:]
			switch c.Status {
			case "R", "C":
				if len(tok) < 1 {
					return nil, fmt.Errorf("checkpoint: rename record without its new path")
				}
				c.Status, c.OldPath, c.Path = "R", c.Path, tok[0]
				tok = tok[1:]
			case "T":
				c.Status = "M"
			}
			at[c.Path] = len(list)
			list = append(list, c)
			continue
		}
		added, rest, ok1 := strings.Cut(head, "\t")
		removed, path, ok2 := strings.Cut(rest, "\t")
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("checkpoint: unexpected numstat record %q", head)
		}
		tok = tok[1:]
		if path == "" { // a rename: the old and new paths follow
			if len(tok) < 2 {
				return nil, fmt.Errorf("checkpoint: numstat rename without its paths")
			}
			path, tok = tok[1], tok[2:]
		}
		i, ok := at[path]
		if !ok {
			return nil, fmt.Errorf("checkpoint: line counts for %q, which has no diff record", path)
		}
		if added == "-" {
			list[i].Binary = true
			continue
		}
		list[i].Added, _ = strconv.Atoi(added)
		list[i].Removed, _ = strconv.Atoi(removed)
	}
	return list, nil
}

// revisions turns checkpoint IDs and names into git revisions, refusing
// anything else before git could read it as an option or an expression.
func revisions(refs ...string) ([]string, error) {
	revs := make([]string, len(refs))
	for i, r := range refs {
		switch {
		case len(r) >= 40 && strings.Trim(r, "0123456789abcdef") == "":
			revs[i] = r
		case validName(r):
			revs[i] = "refs/acphost/" + r
		default:
			return nil, fmt.Errorf("checkpoint: %q is neither a checkpoint ID nor a checkpoint name", r)
		}
	}
	return revs, nil
}
