package bridge

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/fsroot"
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
	SSH *SSHTarget
}

// SSHTarget names an SSH host and login.
type SSHTarget struct {
	User string
	Host string
	Port int // 0 means 22
}

// Addr returns "host:port".
func (t SSHTarget) Addr() string {
	port := t.Port
	if port == 0 {
		port = 22
	}
	return net.JoinHostPort(t.Host, strconv.Itoa(port))
}

func (t SSHTarget) String() string {
	if t.User == "" {
		return t.Addr()
	}
	return t.User + "@" + t.Addr()
}

// ParseWorkspace reads "/abs/path" or "ssh://user@host[:port]/abs/path".
func ParseWorkspace(s string) (Workspace, error) {
	if !strings.HasPrefix(s, "ssh://") {
		if !path.IsAbs(s) {
			return Workspace{}, fmt.Errorf("bridge: workspace %q: path must be absolute", s)
		}
		return Workspace{Path: path.Clean(s)}, nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return Workspace{}, fmt.Errorf("bridge: workspace %q: %w", s, err)
	}
	if u.Hostname() == "" {
		return Workspace{}, fmt.Errorf("bridge: workspace %q: no host", s)
	}
	t := &SSHTarget{User: u.User.Username(), Host: u.Hostname()}
	if p := u.Port(); p != "" {
		if t.Port, err = strconv.Atoi(p); err != nil || t.Port <= 0 || t.Port > 65535 {
			return Workspace{}, fmt.Errorf("bridge: workspace %q: bad port %q", s, p)
		}
	}
	if u.Path == "" || !path.IsAbs(u.Path) {
		return Workspace{}, fmt.Errorf("bridge: workspace %q: path must be absolute", s)
	}
	return Workspace{Path: path.Clean(u.Path), SSH: t}, nil
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
	template fsroot.DialConfig

	mu    sync.Mutex
	conns map[string]*fsroot.SSHConn
}

// NewSSHHosts returns a pool dialling with template's keys, known_hosts and
// keepalive settings; User and Addr come from each workspace.
func NewSSHHosts(template fsroot.DialConfig) *SSHHosts {
	return &SSHHosts{template: template, conns: map[string]*fsroot.SSHConn{}}
}

// Conn returns the shared connection to target.
func (h *SSHHosts) Conn(target SSHTarget) *fsroot.SSHConn {
	key := target.String()
	h.mu.Lock()
	defer h.mu.Unlock()
	if c, ok := h.conns[key]; ok {
		return c
	}
	cfg := h.template
	cfg.User, cfg.Addr = target.User, target.Addr()
	c := fsroot.NewSSHConn(cfg)
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
	conn := h.Conn(*w.SSH)
	return &acpclient.SSHTransport{Dial: conn.Client, Path: argv[0], Args: argv[1:], Dir: w.Path, Env: env}, nil
}

// Files returns the file root for the workspace: local, or SFTP over the
// shared connection. grants are the session's external directories.
func (h *SSHHosts) Files(ctx context.Context, w Workspace, grants []string) (fsroot.Root, error) {
	opts := &fsroot.Options{Grants: grants}
	if w.SSH == nil {
		return fsroot.NewLocal(w.Path, opts)
	}
	return fsroot.NewSFTPConn(ctx, h.Conn(*w.SSH), w.Path, opts)
}
