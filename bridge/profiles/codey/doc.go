// Package codey is the profile of Codey ("codey agent … stdio"): its
// launch options (permission mode, always-approve), the models it lists in
// its initialize answer, and the reading of "codey models" for health
// checks (bridge.Doctor).
//
// It is written against the exported API of packages bridge and acpclient
// only. Package bridge/profiles lists it with the other built-in profiles.
package codey
