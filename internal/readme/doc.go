// Package readme holds the test that keeps the README's Go code in step
// with the Example functions it quotes. It has no code of its own.
package readme
