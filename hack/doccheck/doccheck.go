// Package doccheck checks the repository's Markdown as GitHub renders it: every relative link must name a file
// of the repository, and every anchor a heading (or an HTML id) of the page it points at. Its test runs over
// README.md and docs/ in CI, so a page renamed or a heading reworded cannot leave a dead link behind.
package doccheck

import (
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// Broken is a link that does not resolve.
type Broken struct {
	// File is the Markdown file holding the link, slash-separated from the repository's root.
	File string
	// Line is the link's line in File, from 1.
	Line int
	// Target is the link as written.
	Target string
	// Reason says what is missing.
	Reason string
}

func (b Broken) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", b.File, b.Line, b.Target, b.Reason)
}

// Check reads the Markdown files named by files (slash-separated paths from fsys's root, which is the
// repository's) and returns every relative link among them that does not resolve. Links with a scheme
// (https:, mailto:) are left alone: checking them needs the network and they break for reasons of their own.
func Check(fsys fs.FS, files []string) ([]Broken, error) {
	pages := map[string]*page{}
	load := func(name string) (*page, error) {
		if p, ok := pages[name]; ok {
			return p, nil
		}
		src, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", name, err)
		}
		p := parse(string(src))
		pages[name] = p
		return p, nil
	}
	var broken []Broken
	for _, file := range files {
		p, err := load(file)
		if err != nil {
			return nil, err
		}
		for _, l := range p.links {
			reason, err := resolve(fsys, file, l.target, load)
			if err != nil {
				return nil, err
			}
			if reason != "" {
				broken = append(broken, Broken{File: file, Line: l.line, Target: l.target, Reason: reason})
			}
		}
	}
	return broken, nil
}

// Markdown lists the Markdown files under dir (slash-separated, from fsys's root), in lexical order.
func Markdown(fsys fs.FS, dir string) ([]string, error) {
	var files []string
	err := fs.WalkDir(fsys, dir, func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(name, ".md") {
			files = append(files, name)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", dir, err)
	}
	return files, nil
}

var (
	scheme    = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
	lineRange = regexp.MustCompile(`^L\d+(-L\d+)?$`)
)

// resolve says why target, a link in file, does not resolve, or "" when it does. It reads a Markdown target with
// load to see its anchors.
func resolve(fsys fs.FS, file, target string, load func(string) (*page, error)) (string, error) {
	if scheme.MatchString(target) || strings.HasPrefix(target, "//") {
		return "", nil
	}
	rawPath, fragment, _ := strings.Cut(target, "#")
	p, err := url.PathUnescape(rawPath)
	if err != nil {
		return "bad escape in the path", nil
	}
	name := file
	if p != "" {
		if strings.HasPrefix(p, "/") {
			// GitHub resolves a link from the root of the repository's tree.
			name = path.Clean(strings.TrimPrefix(p, "/"))
		} else {
			name = path.Join(path.Dir(file), p)
		}
		if name == ".." || strings.HasPrefix(name, "../") {
			return "outside the repository", nil
		}
		if _, err := fs.Stat(fsys, name); err != nil {
			return "no such file or directory", nil
		}
	}
	if fragment == "" {
		return "", nil
	}
	if !strings.HasSuffix(name, ".md") {
		// GitHub's anchors into a source file are line numbers.
		if lineRange.MatchString(fragment) {
			return "", nil
		}
		return "an anchor into a file that is not Markdown must be a line (#L12)", nil
	}
	anchor, err := url.PathUnescape(fragment)
	if err != nil {
		return "bad escape in the anchor", nil
	}
	pg, err := load(name)
	if err != nil {
		return "", err
	}
	if !pg.anchors[anchor] {
		return fmt.Sprintf("no heading or id %q in %s", anchor, name), nil
	}
	return "", nil
}

type link struct {
	line   int
	target string
}

// page is what a Markdown file holds for the check: its links and the anchors others may link to.
type page struct {
	links   []link
	anchors map[string]bool
}

var (
	fence      = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})")
	heading    = regexp.MustCompile(`^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$`)
	codeSpan   = regexp.MustCompile("(`+)(.+?)(`+)")
	inlineLink = regexp.MustCompile(`!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*(<[^>]*>|[^\s()]+)(?:\s+"[^"]*")?\s*\)`)
	reference  = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)`)
	htmlID     = regexp.MustCompile(`<[a-zA-Z][^>]*\s(?:id|name)="([^"]+)"`)
)

// parse reads the links and anchors of a Markdown document, leaving out fenced code blocks and code spans.
func parse(src string) *page {
	p := &page{anchors: map[string]bool{}}
	seen := map[string]int{}
	var inFence string
	for i, text := range strings.Split(src, "\n") {
		if m := fence.FindStringSubmatch(text); m != nil {
			switch {
			case inFence == "":
				inFence = m[1]
			case m[1][0] == inFence[0] && len(m[1]) >= len(inFence) && strings.TrimSpace(text) == m[1]:
				inFence = ""
			}
			continue
		}
		if inFence != "" {
			continue
		}
		if m := heading.FindStringSubmatch(text); m != nil {
			slug := Slug(plainText(m[1]))
			// GitHub numbers a repeated heading's anchor: "usage", "usage-1", "usage-2".
			if n := seen[slug]; n > 0 {
				p.anchors[slug+"-"+strconv.Itoa(n)] = true
			} else {
				p.anchors[slug] = true
			}
			seen[slug]++
		}
		for _, m := range htmlID.FindAllStringSubmatch(text, -1) {
			p.anchors[m[1]] = true
		}
		outside := codeSpan.ReplaceAllStringFunc(text, func(span string) string {
			return strings.Repeat("x", len(span)) // keeps a link's brackets balanced around a code span
		})
		for _, m := range inlineLink.FindAllStringSubmatch(outside, -1) {
			p.links = append(p.links, link{line: i + 1, target: strings.Trim(m[2], "<>")})
		}
		if m := reference.FindStringSubmatch(outside); m != nil {
			p.links = append(p.links, link{line: i + 1, target: strings.Trim(m[1], "<>")})
		}
	}
	return p
}

// plainText is a heading's text as rendered: code spans and links give their text, emphasis marks go.
func plainText(s string) string {
	s = codeSpan.ReplaceAllString(s, "$2")
	s = inlineLink.ReplaceAllString(s, "$1")
	return strings.NewReplacer("**", "", "__", "").Replace(s)
}

// Slug is the anchor GitHub gives a heading of the text s: lower case, punctuation and symbols dropped, each space
// a hyphen (so "Tenants and grants (for platform teams)" is "tenants-and-grants-for-platform-teams").
func Slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(s)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
