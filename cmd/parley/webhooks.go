package main

import (
	"context"
	"fmt"

	"github.com/parley-dev/parley/runtime/webhook"
)

// startWebhooks runs a webhook dispatcher until ctx ends. stop waits until the attempts in flight are recorded.
func startWebhooks(ctx context.Context, cfg webhook.Config) (d *webhook.Dispatcher, stop func(), err error) {
	d, err = webhook.New(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("starting webhook deliveries: %w", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = d.Run(ctx) // returns when ctx ends
	}()
	return d, func() { <-done }, nil
}
