//go:build !purego

package utf8text

import "golang.org/x/sys/cpu"

// validBlocksAVX2 reports whether p[:n] holds no invalid UTF-8, not
// counting a sequence cut off at its end. n is a positive multiple of 32.
//
//go:noescape
func validBlocksAVX2(p *byte, n int) bool

// validBlocksAVX512 is validBlocksAVX2 64 bytes at a time; n is a positive
// multiple of 64.
//
//go:noescape
func validBlocksAVX512(p *byte, n int) bool

// vectorChecks are the block checks this CPU can run, the fastest first.
var vectorChecks = func() (checks []blockCheck) {
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW {
		checks = append(checks, blockCheck{"avx512", 64, validBlocksAVX512})
	}
	if cpu.X86.HasAVX2 {
		checks = append(checks, blockCheck{"avx2", 32, validBlocksAVX2})
	}
	return checks
}()
