package sshconn

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// DefaultPort is the SSH port a Destination without one uses.
const DefaultPort = 22

// Destination names an SSH host and the login on it: what "user@host:port"
// says. It is comparable, so it can key a map of connections.
type Destination struct {
	// User is the login name; "" leaves it to the caller (Dial sends it
	// as is, so fill it in first, e.g. with the local user).
	User string
	// Host is a name or an IP address, IPv6 without brackets.
	Host string
	// Port is the TCP port; 0 means DefaultPort.
	Port int
}

// Parse reads "user@host:port", "user@host" or "host:port". The port
// defaults to 22 and the user to "". IPv6 hosts are written in brackets:
// "root@[::1]:2222".
func Parse(s string) (Destination, error) {
	var d Destination
	hostport := s
	if i := strings.LastIndex(s, "@"); i >= 0 {
		d.User, hostport = s[:i], s[i+1:]
	}
	if hostport == "" {
		return Destination{}, fmt.Errorf("ssh destination %q has no host", s)
	}
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = strings.Trim(hostport, "[]"), strconv.Itoa(DefaultPort)
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 || host == "" {
		return Destination{}, fmt.Errorf("ssh destination %q: bad host or port", s)
	}
	d.Host, d.Port = host, int(n)
	return d, nil
}

// Addr returns "host:port", the port defaulted, as net.Dial takes it.
func (d Destination) Addr() string {
	port := d.Port
	if port == 0 {
		port = DefaultPort
	}
	return net.JoinHostPort(d.Host, strconv.Itoa(port))
}

// String returns "user@host:port" (or "host:port" without a user), the
// form Parse reads.
func (d Destination) String() string {
	if d.User == "" {
		return d.Addr()
	}
	return d.User + "@" + d.Addr()
}
