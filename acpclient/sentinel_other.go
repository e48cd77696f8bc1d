//go:build !unix

package acpclient

// sentinel does not exist here: without process groups and /bin/sh there is
// nothing to end, and what an agent started survives a host that dies
// without closing it (see the package doc).
type sentinel struct{}

const sentinelShell = ""

func startSentinel(string, int) (*sentinel, error) { return nil, nil }

func (*sentinel) stop() {}

func (*sentinel) pid() int { return 0 }
