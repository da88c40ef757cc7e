// Package ids makes the runtime's identifiers: conversations, messages, leads, events, knowledge items and
// requests.
package ids

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/binary"
	"time"
)

var encoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// New returns prefix and 20 characters: the time in milliseconds, then 48 random bits. IDs made later sort after
// earlier ones, as UUIDv7s do, so the store appends them to its indexes instead of dirtying a random page per
// insert; the random part keeps them unguessable and unique without coordination.
func New(prefix string) string {
	var b [12]byte
	binary.BigEndian.PutUint64(b[:8], uint64(time.Now().UnixMilli())<<16)
	_, _ = rand.Read(b[6:]) // crypto/rand.Read never fails on supported platforms
	// Encoded after the prefix in one buffer, so that the ID is the only allocation.
	var buf [64]byte
	out := append(buf[:0], prefix...)
	out = encoding.AppendEncode(out, b[:])
	return string(out)
}
