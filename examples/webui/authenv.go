package main

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/acphost/acphost/bridge"
)

// errUndeclaredEnv is wrapped when a sign-in answer carries environment
// variables its method did not ask for.
var errUndeclaredEnv = errors.New("variables the sign-in method did not ask for")

// checkAuthEnv refuses a sign-in answer whose env holds anything but the
// variables the chosen env_var method declared. The bridge passes every
// variable of the answer to the restarted agent, so without this check the
// page would choose the agent's environment (LD_PRELOAD, PATH, …): code
// execution. Methods of other types take no variables at all.
func checkAuthEnv(req *bridge.AuthRequest, methodID string, env map[string]string) error {
	var declared []string
	for _, m := range req.Methods {
		if m.ID == methodID && m.Type == bridge.AuthTypeEnvVar {
			for _, v := range m.Vars {
				declared = append(declared, v.Name)
			}
		}
	}
	var extra []string
	for name := range env {
		if !slices.Contains(declared, name) {
			extra = append(extra, name)
		}
	}
	if len(extra) == 0 {
		return nil
	}
	sort.Strings(extra)
	return fmt.Errorf("sign-in method %q: %w: %s", methodID, errUndeclaredEnv, strings.Join(extra, ", "))
}
