package ratelimit

import "testing"

func TestNewRedisClientAddress(t *testing.T) {
	for _, addr := range []string{"redis", "redis:6379", ":6379", "[::1]:6379"} {
		_, err := NewRedisClient(RedisConfig{Addr: addr})
		if bad := addr == "redis" || addr == ":6379"; bad != (err != nil) {
			t.Errorf("%q: error %v", addr, err)
		}
	}
}
