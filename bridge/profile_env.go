package bridge

import (
	"slices"

	"github.com/acphost/acphost/acpclient"
)

// MinimalEnv returns the environment to start the profile's agent with
// (LaunchOptions.Env) instead of the app's whole one: acpclient.MinimalEnv
// of environ (os.Environ, typically) with the profile's EnvNames and extra
// (names, or prefixes ending in "*") kept too.
func (p *Profile) MinimalEnv(environ []string, extra ...string) []string {
	return acpclient.MinimalEnv(environ, slices.Concat(p.EnvNames, extra)...)
}
