package main

import (
	"os"
)

// isTerminal reports whether f is an interactive terminal. It asks the file
// system for a character device and rules out the null device, the one
// character device a redirection commonly names. (golang.org/x/term would
// ask the terminal driver itself, but this module does not require it.)
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	if null, err := os.Stat(os.DevNull); err == nil && os.SameFile(fi, null) {
		return false
	}
	return true
}

// useColor reports whether output to a terminal may be coloured: not when
// NO_COLOR is set (to a non-empty value, as https://no-color.org says) or
// TERM is "dumb".
func useColor(tty bool) bool {
	return tty && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
}

// palette wraps text in ANSI styles, or leaves it alone without colour.
type palette struct{ on bool }

func (p palette) style(code, s string) string {
	if !p.on || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (p palette) dim(s string) string    { return p.style("2", s) }
func (p palette) bold(s string) string   { return p.style("1", s) }
func (p palette) red(s string) string    { return p.style("31", s) }
func (p palette) green(s string) string  { return p.style("32", s) }
func (p palette) yellow(s string) string { return p.style("33", s) }
func (p palette) cyan(s string) string   { return p.style("36", s) }
