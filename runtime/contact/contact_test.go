package contact

import "testing"

func TestFind(t *testing.T) {
	for _, tc := range []struct {
		text, email, phone string
	}{
		{"my email is ana@example.com.", "ana@example.com", ""},
		{"Reach me: Ana.Lopez+shop@mail.example.co.uk or call 030 1234 5678", "Ana.Lopez+shop@mail.example.co.uk", "030 1234 5678"},
		{"+49 30 1234567 please", "", "+49 30 1234567"},
		{"(555) 010-0199", "", "(555) 010-0199"},
		{"my phone number is 555-0100-22", "", "555-0100-22"},
		{"where is my order 12345678?", "", ""},
		{"I ordered on 2026-11-22", "", ""},
		{"size 42, 1 item", "", ""},
		{"write to ana@localhost", "", ""},
		{"email: bob@example", "", ""},
		{"call me at 12345", "", ""},
		{"no contact here", "", ""},
		{"ana@example.com, phone +1 (555) 010-0199", "ana@example.com", "+1 (555) 010-0199"},
	} {
		email, phone := Find(tc.text)
		if email != tc.email || phone != tc.phone {
			t.Errorf("Find(%q) = %q, %q; want %q, %q", tc.text, email, phone, tc.email, tc.phone)
		}
	}
}

func TestEmail(t *testing.T) {
	for s, want := range map[string]bool{
		"ana@example.com": true, " ana@example.com ": true, "Ana <ana@example.com>": false, "ana@": false,
		"@example.com": false, "ana@example": false, "a b@example.com": false, "": false,
		"o'brien@example.ie": true, "ana.lopez+shop@mail.example.co.uk": true, "jürgen@müller.example": true,
		// Each of these is an address to net/mail, and in a mailto: link would add recipients or headers.
		"x?cc=evil%40attacker.example&body=hi@shop.example": false, "x?cc=evil@attacker.example": false,
		"a&cc=evil@example.com": false, "a%3Fcc%3Devil@example.com": false, "a=b@example.com": false,
		"a#b@example.com": false, "a/b@example.com": false, `"a?cc=b"@example.com`: false, "a@[192.0.2.1]": false,
		"a@example.com?cc=evil@attacker.example": false, "a@exa_mple.com": false, "a@-example.com": false,
	} {
		if _, ok := Email(s); ok != want {
			t.Errorf("Email(%q) ok = %v, want %v", s, ok, want)
		}
	}
}

func TestPhone(t *testing.T) {
	for s, want := range map[string]string{
		"+49 30 1234567": "+49 30 1234567", "030  1234-567": "030 1234-567", "1234567": "1234567",
		"123456": "", "1234567890123456": "", "12a4567": "", "49+301234567": "", "": "",
	} {
		got, ok := Phone(s)
		if got != want || ok != (want != "") {
			t.Errorf("Phone(%q) = %q, %v; want %q", s, got, ok, want)
		}
	}
}
