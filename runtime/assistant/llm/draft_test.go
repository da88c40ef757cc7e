package llm

import "testing"

func TestReadDraft(t *testing.T) {
	for _, c := range []struct{ in, title, content string }{
		{"Paying with a voucher\n\nEnter the code at checkout.", "Paying with a voucher", "Enter the code at checkout."},
		{"# Paying with a voucher\n\nEnter the code.\n\n- one\n- two", "Paying with a voucher", "Enter the code.\n\n- one\n- two"},
		{"**Title:** \"Vouchers\"\nEnter the code.", "Vouchers", "Enter the code."},
		{"Title: Vouchers\n\nEnter the code.", "Vouchers", "Enter the code."},
		{"Shipping: to Canada\n\nFive days.", "Shipping: to Canada", "Five days."},
		{"  Enter the code at checkout.  ", "", "Enter the code at checkout."},
		{"Enter the code at checkout.\n\n  ", "", "Enter the code at checkout."},
		{"", "", ""},
	} {
		title, content := readDraft(c.in)
		if title != c.title || content != c.content {
			t.Errorf("readDraft(%q) = %q, %q; want %q, %q", c.in, title, content, c.title, c.content)
		}
	}
}
