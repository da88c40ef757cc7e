package live

import (
	"errors"
	"testing"
)

func TestHubBoundsAndWakes(t *testing.T) {
	h := NewHub(3, 2)
	a1, done1, err := h.Subscribe("a")
	if err != nil {
		t.Fatal(err)
	}
	_, done2, err := h.Subscribe("a")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.Subscribe("a"); !errors.Is(err, ErrTooManyStreams) {
		t.Errorf("a third stream of one merchant: %v, want ErrTooManyStreams", err)
	}
	b, doneB, err := h.Subscribe("b")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.Subscribe("c"); !errors.Is(err, ErrTooManyStreams) {
		t.Errorf("a fourth stream of the replica: %v, want ErrTooManyStreams", err)
	}
	h.Publish("a")
	h.Publish("a") // never blocks
	select {
	case <-a1:
	default:
		t.Error("a's stream was not woken")
	}
	select {
	case <-b:
		t.Error("b's stream was woken by a's event")
	default:
	}
	done1()
	done1() // twice is once
	done2()
	doneB()
	if h.Open() != 0 {
		t.Errorf("open streams after closing all: %d", h.Open())
	}
}
