package crawl

import (
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// ValidPattern checks an include or exclude pattern: a path starting with "/", with the wildcards of
// doublestar ("*" within a segment, "**" across segments, "?", classes and alternatives).
func ValidPattern(p string) error {
	if !strings.HasPrefix(p, "/") {
		return fmt.Errorf("the pattern %q does not start with /", p)
	}
	if !doublestar.ValidatePattern(p) {
		return fmt.Errorf("the pattern %q is not a valid path pattern", p)
	}
	return nil
}

// matches reports whether the path matches the pattern: a pattern without wildcards is a prefix of whole segments
// ("/help" matches "/help" and "/help/returns", not "/helpdesk"), one with wildcards must match the whole path.
func matches(pattern, path string) bool {
	if !strings.ContainsAny(pattern, "*?[{\\") {
		prefix := strings.TrimSuffix(pattern, "/")
		return path == prefix || strings.HasPrefix(path, prefix+"/") || prefix == ""
	}
	ok, err := doublestar.Match(pattern, path)
	return err == nil && ok
}

// Scope is which paths of a site a source reads.
type Scope struct {
	Include, Exclude []string
}

// Allows reports whether the source reads the page at path: it matches one of Include (or Include is empty) and
// none of Exclude.
func (s Scope) Allows(path string) bool {
	for _, p := range s.Exclude {
		if matches(p, path) {
			return false
		}
	}
	if len(s.Include) == 0 {
		return true
	}
	for _, p := range s.Include {
		if matches(p, path) {
			return true
		}
	}
	return false
}
