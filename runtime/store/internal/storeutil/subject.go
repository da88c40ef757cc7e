package storeutil

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/parley-dev/parley/runtime/store"
)

// phoneDigits is the SQL expression of the digits of the column l.phone, which holds a number as contact.Phone
// writes it: digits, a leading +, and spaces, dots, dashes, slashes or parentheses between them.
const phoneDigits = `REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(l.phone, ' ', ''), '.', ''), '-', ''), '/', ''), '(', ''), ')', ''), '+', '')`

// PhoneDigits returns the ASCII digits of a phone number, which is how SubjectRecords compares numbers.
func PhoneDigits(phone string) string {
	return strings.Map(func(r rune) rune {
		if r < unicode.MaxASCII && unicode.IsDigit(r) {
			return r
		}
		return -1
	}, phone)
}

// maxSubjectHops bounds how far SubjectRecords follows a subject from lead to lead: a lead's visitor ID, e-mail
// address and phone number name the subject too, and may name further leads.
const maxSubjectHops = 4

// SubjectRecords returns what the merchant holds about a data subject, from one snapshot: the leads that name it,
// followed from lead to lead by the visitor IDs, e-mail addresses and phone numbers they hold, then every
// conversation and lead of those visitors and of those leads' conversations (store.Reader.SubjectRecords).
func (l Reads) SubjectRecords(ctx context.Context, merchantID string, s store.Subject) (store.SubjectData, error) {
	var data store.SubjectData
	err := l.Snapshot(ctx, func(q QueryFunc) error {
		data = store.SubjectData{}
		ids := newIdentifiers(s)
		var named []store.Lead
		for range maxSubjectHops {
			found, err := l.namedLeads(ctx, q, merchantID, ids)
			if err != nil {
				return err
			}
			named = found
			if !ids.learn(found) {
				break
			}
		}
		var conversations []string
		for _, lead := range named {
			if lead.ConversationID != "" {
				conversations = append(conversations, lead.ConversationID)
			}
		}
		visitors, conversations := keys(ids.visitors), compactSorted(conversations)
		if len(visitors) == 0 && len(conversations) == 0 {
			data.Leads = named
			return nil
		}
		w := NewWhere(l.Dialect)
		w.Add("c.merchant_id = ?", merchantID)
		w.Add("(" + in(w, "c.visitor_id", visitors) + " OR " + in(w, "c.id", conversations) + ")")
		var err error
		if data.Conversations, err = QueryList(ctx, q, `SELECT `+ConversationColumns+` FROM conversations c WHERE `+
			w.String()+` ORDER BY c.created_at, c.id`, w.Args, l.ScanConversation); err != nil {
			return fmt.Errorf("reading the subject's conversations: %w", err)
		}
		for _, c := range data.Conversations {
			conversations = append(conversations, c.ID)
		}
		conversations = compactSorted(conversations)
		w = NewWhere(l.Dialect)
		w.Add("l.merchant_id = ?", merchantID)
		w.Add("(" + in(w, "l.visitor_id", visitors) + " OR " + in(w, "l.conversation_id", conversations) + ")")
		more, err := QueryList(ctx, q, `SELECT `+LeadColumns+` FROM leads l WHERE `+w.String(), w.Args, l.ScanLead)
		if err != nil {
			return fmt.Errorf("reading the subject's leads: %w", err)
		}
		data.Leads = mergeLeads(named, more)
		return nil
	})
	if err != nil {
		return store.SubjectData{}, fmt.Errorf("finding a data subject's records of merchant %s: %w", merchantID, err)
	}
	return data, nil
}

// identifiers are what names a data subject: visitor IDs, e-mail addresses in lower case, phone numbers' digits.
type identifiers struct {
	visitors, emails, phones map[string]bool
}

func newIdentifiers(s store.Subject) identifiers {
	ids := identifiers{visitors: map[string]bool{}, emails: map[string]bool{}, phones: map[string]bool{}}
	ids.add(s.VisitorID, s.Email, s.Phone)
	return ids
}

// add adds the non-empty ones and reports whether any was new.
func (ids identifiers) add(visitorID, email, phone string) bool {
	grew := false
	for _, kv := range []struct {
		set map[string]bool
		key string
	}{{ids.visitors, visitorID}, {ids.emails, strings.ToLower(email)}, {ids.phones, PhoneDigits(phone)}} {
		if kv.key != "" && !kv.set[kv.key] {
			kv.set[kv.key] = true
			grew = true
		}
	}
	return grew
}

// learn adds what the leads hold and reports whether anything was new.
func (ids identifiers) learn(leads []store.Lead) bool {
	grew := false
	for _, lead := range leads {
		if ids.add(lead.VisitorID, lead.Email, lead.Phone) {
			grew = true
		}
	}
	return grew
}

// namedLeads returns the merchant's leads that hold one of the visitor IDs, e-mail addresses or phone numbers.
func (l Reads) namedLeads(ctx context.Context, q QueryFunc, merchantID string, ids identifiers) ([]store.Lead, error) {
	w := NewWhere(l.Dialect)
	w.Add("l.merchant_id = ?", merchantID)
	w.Add("(" + in(w, "l.visitor_id", keys(ids.visitors)) + " OR " + in(w, "LOWER(l.email)", keys(ids.emails)) +
		" OR (l.phone != '' AND " + in(w, phoneDigits, keys(ids.phones)) + "))")
	leads, err := QueryList(ctx, q, `SELECT `+LeadColumns+` FROM leads l WHERE `+w.String()+
		` ORDER BY l.created_at, l.id`, w.Args, l.ScanLead)
	if err != nil {
		return nil, fmt.Errorf("reading the leads that name the subject: %w", err)
	}
	return leads, nil
}

func keys(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// in is the condition that column is one of values, its arguments added to w; false when there are none.
func in(w *Where, column string, values []string) string {
	if len(values) == 0 {
		return "1 = 0"
	}
	params := make([]string, len(values))
	for i, v := range values {
		params[i] = w.Param(v)
	}
	return column + " IN (" + strings.Join(params, ", ") + ")"
}

func compactSorted(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}

// mergeLeads returns the leads of both lists, each once, oldest first.
func mergeLeads(a, b []store.Lead) []store.Lead {
	all := append(slices.Clone(a), b...)
	slices.SortFunc(all, func(x, y store.Lead) int {
		if c := x.CreatedAt.Compare(y.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(x.ID, y.ID)
	})
	return slices.CompactFunc(all, func(x, y store.Lead) bool { return x.ID == y.ID })
}
