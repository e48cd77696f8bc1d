package bridge

import (
	"context"
	"fmt"
	"path"
	"strings"
	"sync"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/fsroot"
	"github.com/acphost/acphost/sshconn"
)

// Workspace is where a session's files live and its agent runs: a local
// directory, or a directory on an SSH host, written
// "ssh://user@host[:port]/abs/path". For an SSH workspace the agent is
// launched on that host (its own tools run there) and fs/* is served over
// SFTP on the same connection.
type Workspace struct {
	// Path is the absolute directory, on this machine or on the SSH host.
	Path string
	// SSH is the host for a remote workspace; nil for a local one.
	SSH *sshconn.Destination
}

// ParseWorkspace reads "/abs/path" or "ssh://user@host[:port]/abs/path";
// the part after "ssh://" and before the path is what sshconn.Parse reads.
func ParseWorkspace(s string) (Workspace, error) {
	rest, remote := strings.CutPrefix(s, "ssh://")
	if !remote {
		if !path.IsAbs(s) {
			return Workspace{}, fmt.Errorf("bridge: workspace %q: path must be absolute", s)
		}
		return Workspace{Path: path.Clean(s)}, nil
	}
	i := strings.Index(rest, "/")
	if i < 0 {
		return Workspace{}, fmt.Errorf("bridge: workspace %q: path must be absolute", s)
	}
	dest, err := sshconn.Parse(rest[:i])
	if err != nil {
		return Workspace{}, fmt.Errorf("bridge: workspace %q: %w", s, err)
	}
	return Workspace{Path: path.Clean(rest[i:]), SSH: &dest}, nil
}

// String returns the workspace in the form ParseWorkspace reads.
func (w Workspace) String() string {
	if w.SSH == nil {
		return w.Path
	}
	return "ssh://" + w.SSH.String() + w.Path
}

// SSHHosts shares one SSH connection per host among everything that needs
// it: agents launched there, SFTP roots, provider checks. A dropped
// connection is dialled again by the next user. The zero value is not
// usable; call NewSSHHosts.
type SSHHosts struct {
	config sshconn.Config

	mu    sync.Mutex
	conns map[string]*sshconn.Conn
}

// NewSSHHosts returns a pool dialling every host with config's keys,
// known_hosts and keepalive settings.
func NewSSHHosts(config sshconn.Config) *SSHHosts {
	return &SSHHosts{config: config, conns: map[string]*sshconn.Conn{}}
}

// conn returns the shared connection to dest.
func (h *SSHHosts) conn(dest sshconn.Destination) *sshconn.Conn {
	// By text, so a port left 0 and an explicit 22 share one connection.
	key := dest.String()
	h.mu.Lock()
	defer h.mu.Unlock()
	if c, ok := h.conns[key]; ok {
		return c
	}
	c := sshconn.New(dest, h.config)
	h.conns[key] = c
	return c
}

// Close closes every connection.
func (h *SSHHosts) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	for k, c := range h.conns {
		c.Close()
		delete(h.conns, k)
	}
	return nil
}

// Transport returns a Transport that starts argv on the workspace's host,
// in the workspace directory; env entries ("NAME=value") are set for the
// agent only. The program is looked up on the remote host. For a local
// workspace it is a CommandTransport.
func (h *SSHHosts) Transport(w Workspace, argv []string, env []string) (acpclient.Transport, error) {
	if len(argv) == 0 {
		return nil, fmt.Errorf("bridge: no agent command for workspace %s", w)
	}
	if w.SSH == nil {
		return &acpclient.CommandTransport{Path: argv[0], Args: argv[1:], Dir: w.Path, Env: env}, nil
	}
	conn := h.conn(*w.SSH)
	return &acpclient.SSHTransport{Dial: conn.Client, Path: argv[0], Args: argv[1:], Dir: w.Path, Env: env}, nil
}

// Files returns the file root for the workspace: local, or SFTP over the
// shared connection. It grants nothing beyond the workspace: a session
// given the root as SessionConfig.Files sets its grants and its write gate
// (ExternalDirectories, Policy).
func (h *SSHHosts) Files(ctx context.Context, w Workspace) (fsroot.Root, error) {
	if w.SSH == nil {
		return fsroot.NewLocal(w.Path, nil)
	}
	return fsroot.NewSFTPConn(ctx, h.conn(*w.SSH), w.Path, nil)
}
