package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/examples/internal/sshflags"
	"github.com/acphost/acphost/fsroot"
)

// workspace is where the agents run and what their sessions may touch: a
// local directory, or a directory on an SSH host whose one connection
// carries the agents and their files.
type workspace struct {
	cwd   string           // absolute; on the SSH host when remote
	hosts *bridge.SSHHosts // nil when local
	ws    bridge.Workspace // the remote workspace, when hosts is set
}

func newWorkspace(o *options) (*workspace, error) {
	if o.ssh == "" {
		dir := o.cwd
		if dir == "" {
			dir = "."
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, fmt.Errorf("--cwd %q: %w", dir, err)
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("--cwd %q: not a directory", dir)
		}
		return &workspace{cwd: abs}, nil
	}
	if !strings.HasPrefix(o.cwd, "/") {
		return nil, errors.New("--ssh needs --cwd with the absolute workspace path on the remote host")
	}
	target, err := sshflags.Target(o.ssh)
	if err != nil {
		return nil, fmt.Errorf("--ssh %q: %w", o.ssh, err)
	}
	dial, err := sshflags.DialConfig(o.sshKey, o.knownHosts)
	if err != nil {
		return nil, err
	}
	path := filepath.ToSlash(filepath.Clean(o.cwd))
	return &workspace{cwd: path, hosts: bridge.NewSSHHosts(dial), ws: bridge.Workspace{Path: path, SSH: &target}}, nil
}

// files returns a root for a session in dir (the workspace when empty).
func (w *workspace) files(ctx context.Context, dir string) (fsroot.Root, error) {
	if w.hosts != nil {
		ws := w.ws
		if dir != "" {
			ws.Path = dir
		}
		return w.hosts.Files(ctx, ws)
	}
	if dir == "" {
		dir = w.cwd
	}
	return fsroot.NewLocal(dir, nil)
}

// Close ends the SSH connection, if any.
func (w *workspace) Close() error {
	if w.hosts == nil {
		return nil
	}
	return w.hosts.Close()
}

// errOutsideWorkspace is wrapped when a journaled session's directory is
// not inside the workspace this server was started for.
var errOutsideWorkspace = errors.New("outside this server's workspace")

// contains reports whether dir is the workspace or lies inside it. A
// journal outlives servers: a session recorded by one started elsewhere
// must not reopen with its old directory as the agent's cwd and file root.
// Local paths are compared with their symbolic links resolved, so a link
// inside the workspace does not lead out of it.
func (w *workspace) contains(dir string) bool {
	root := w.cwd
	if w.hosts != nil {
		root, dir = path.Clean(root), path.Clean(dir)
	} else {
		root, dir = resolved(root), resolved(dir)
	}
	if root == dir {
		return true
	}
	return strings.HasPrefix(dir, strings.TrimSuffix(root, "/")+"/")
}

// resolved is dir made absolute with its symbolic links resolved, as far
// as it exists.
func resolved(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return filepath.Clean(dir)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}
