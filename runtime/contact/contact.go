// Package contact finds and checks the contact details visitors give: email addresses and phone numbers in chat
// messages, and the fields of the contact form.
package contact

import (
	"net/mail"
	"regexp"
	"strings"
	"unicode"
)

var (
	emailPattern = regexp.MustCompile(`[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}`)
	// phonePattern is a run of digits with the separators people write numbers with.
	phonePattern = regexp.MustCompile(`\+?\(?\d[\d\s().\-/]{5,22}\d`)
	// phoneWords make a bare digit run a phone number; without one, only a number written with a leading + or
	// ( counts, so that order numbers and dates are not taken for phones.
	// localPart and domainPart are the addresses a lead may carry, narrower than RFC 5322: its atext lets '?',
	// '&', '=', '%', '#' and '/' into a local part, and each of those means something in a mailto: URI (RFC 6068),
	// where "x?cc=evil%40attacker.example&@shop.example" adds a recipient. Quoted local parts and address literals
	// are refused for the same reason; a visitor's real address needs none of them.
	localPart  = regexp.MustCompile(`^[\p{L}\p{N}_+'-]+(\.[\p{L}\p{N}_+'-]+)*$`)
	domainPart = regexp.MustCompile(`^([\p{L}\p{N}]([\p{L}\p{N}-]*[\p{L}\p{N}])?\.)+[\p{L}]{2,}$`)
	phoneWords = regexp.MustCompile(`(?i)\b(phone|call|tel|telephone|mobile|cell|whats\s?app|text me|sms|ring|reach me|number|telefon|handy|anrufen|rückruf|téléphone|portable|appel)`)
)

// Find returns the first email address and phone number in a message, each "" when there is none. Most messages
// have neither: they are told apart without running a regular expression.
func Find(text string) (email, phone string) {
	hasEmail := strings.IndexByte(text, '@') >= 0
	if !hasEmail && digits(text) < 7 {
		return "", ""
	}
	if !hasEmail {
		return "", findPhone(text)
	}
	for _, m := range emailPattern.FindAllString(text, -1) {
		if e, ok := Email(strings.TrimRight(m, ".")); ok {
			email = e
			break
		}
	}
	// The email address's digits are no phone number.
	return email, findPhone(emailPattern.ReplaceAllString(text, " "))
}

// findPhone returns the first phone number in text, or "".
func findPhone(text string) string {
	if digits(text) < 7 {
		return ""
	}
	keyword := phoneWords.MatchString(text)
	for _, m := range phonePattern.FindAllString(text, -1) {
		m = strings.TrimSpace(m)
		if p, ok := Phone(m); ok && (keyword || strings.HasPrefix(m, "+") || strings.HasPrefix(m, "(")) {
			return p
		}
	}
	return ""
}

// digits counts the ASCII digits of s.
func digits(s string) int {
	n := 0
	for i := range len(s) {
		if s[i] >= '0' && s[i] <= '9' {
			n++
		}
	}
	return n
}

// Email checks an email address and returns it without surrounding space: a bare address net/mail accepts whose
// local part is letters, digits, '.', '_', '+', an apostrophe and '-', and whose domain is a host name (see localPart).
func Email(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if len(s) > 254 {
		return "", false
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name != "" || a.Address != s {
		return "", false
	}
	local, domain, _ := strings.Cut(a.Address, "@")
	if !localPart.MatchString(local) || !domainPart.MatchString(domain) {
		return "", false
	}
	return a.Address, true
}

// Phone checks a phone number: 7 to 15 digits (the E.164 bounds), an optional leading +, and only spaces,
// dots, dashes, slashes and parentheses between them. It returns the number with its separators collapsed to
// single spaces.
func Phone(s string) (string, bool) {
	s = strings.TrimSpace(s)
	digits := 0
	for i, r := range s {
		switch {
		case unicode.IsDigit(r) && r < unicode.MaxASCII:
			digits++
		case r == '+' && i == 0:
		case strings.ContainsRune(" .-/()", r):
		default:
			return "", false
		}
	}
	if digits < 7 || digits > 15 {
		return "", false
	}
	return strings.Join(strings.Fields(s), " "), true
}
