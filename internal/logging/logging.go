// Package logging builds the structured loggers of Parley's commands.
package logging

import (
	"io"
	"log/slog"
)

// New returns a logger writing records at level and above to w, as JSON, or as text when format is "text".
func New(w io.Writer, level slog.Level, format string) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if format == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}
