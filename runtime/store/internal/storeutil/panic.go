package storeutil

import (
	"fmt"
	"runtime/debug"
)

// Panic is a write callback's panic, caught on the store's writer goroutine, where nothing would recover it and
// the process would end, to be raised again on the goroutine of the caller that passed the callback (see
// Repanic), whose own recovery (an HTTP server's) then answers that one request.
type Panic struct {
	Value any
	// Stack is the writer goroutine's stack at the panic.
	Stack []byte
}

func (p *Panic) Error() string { return fmt.Sprintf("panic in a write: %v\n\n%s", p.Value, p.Stack) }

// Call runs fn(tx), returning a panic in it as a *Panic.
func Call[T any](fn func(T) error, tx T) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &Panic{Value: v, Stack: debug.Stack()}
		}
	}()
	return fn(tx)
}

// Repanic raises err again when it is a *Panic, and otherwise returns it.
func Repanic(err error) error {
	if p, ok := err.(*Panic); ok { //nolint:errorlint // a writer passes the *Panic itself, never wrapped
		panic(p)
	}
	return err
}
