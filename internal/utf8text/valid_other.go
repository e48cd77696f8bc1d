//go:build !amd64 || purego

package utf8text

// vectorChecks is empty: valid is utf8.ValidString.
var vectorChecks []blockCheck
