package acpclient

import (
	"slices"
	"strings"
)

// minimalEnvNames are the variables MinimalEnv keeps; see its doc.
var minimalEnvNames = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "TMPDIR", "TZ", "NPM_CONFIG_PREFIX",
	"LANG", "LANGUAGE", "LC_*", "XDG_*",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS",
	"DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS",
	"SystemRoot", "ComSpec", "PATHEXT", "USERPROFILE", "APPDATA", "LOCALAPPDATA", "TEMP", "TMP",
}

// MinimalEnv returns the part of environ (entries "NAME=value", such as
// os.Environ's) that an agent needs to run as the user, and the variables
// extra names, for a CommandTransport's Env or LaunchOptions.Env. Passing
// an agent the whole environment of the app hands it every token the user
// has exported and lets an unrelated variable change how it behaves (a
// variable that says "you run inside another agent" makes some refuse to
// start); this is the small set that works instead:
//
//   - finding programs and files: PATH, HOME, USER, LOGNAME, SHELL, TMPDIR,
//     the XDG base directories (XDG_*) and npm's NPM_CONFIG_PREFIX (all
//     that bridge.Resolver reads to find an agent);
//   - locale and display of text: LANG, LANGUAGE, LC_*, TZ, TERM;
//   - reaching the network: the proxy variables (HTTP_PROXY, HTTPS_PROXY,
//     NO_PROXY, ALL_PROXY, also in lower case) and extra TLS roots
//     (SSL_CERT_FILE, SSL_CERT_DIR, NODE_EXTRA_CA_CERTS);
//   - signing in through a browser and reading the OS keyring: DISPLAY,
//     WAYLAND_DISPLAY, DBUS_SESSION_BUS_ADDRESS;
//   - on Windows: SystemRoot, ComSpec, PATHEXT, USERPROFILE, APPDATA,
//     LOCALAPPDATA, TEMP, TMP.
//
// Not in it, among others: API keys and base URLs (a profile lists its
// vendor's, bridge.Profile.EnvNames), SSH_AUTH_SOCK, cloud credentials.
// extra are names, or prefixes ending in "*" ("ANTHROPIC_*"). Entries keep
// environ's order; a variable environ lacks is not invented.
func MinimalEnv(environ []string, extra ...string) []string {
	return FilterEnv(environ, slices.Concat(minimalEnvNames, extra)...)
}

// FilterEnv returns the entries of environ ("NAME=value") whose names
// match one of patterns: a name, or a prefix ending in "*" ("LC_*"). They
// keep environ's order. The result is never nil, so that a transport given
// it does not take it for "this process's whole environment".
func FilterEnv(environ []string, patterns ...string) []string {
	out := []string{}
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if name != "" && slices.ContainsFunc(patterns, func(p string) bool { return envNameMatches(p, name) }) {
			out = append(out, kv)
		}
	}
	return out
}

// envNameMatches reports whether name matches pattern, a name or a prefix
// ending in "*".
func envNameMatches(pattern, name string) bool {
	if prefix, ok := strings.CutSuffix(pattern, "*"); ok {
		return strings.HasPrefix(name, prefix)
	}
	return pattern == name
}
