//go:build integration

package gitops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// Health statuses of Argo CD (gitops-engine's health.HealthStatusCode): a script that returns another is
// reported Unknown.
const (
	healthy     = "Healthy"
	progressing = "Progressing"
	degraded    = "Degraded"
)

var knownStatuses = map[string]bool{healthy: true, progressing: true, degraded: true,
	"Suspended": true, "Missing": true, "Unknown": true}

// healthKey is the argocd-cm key of a kind's health check: resource.customizations.health.<group>_<kind>.
func healthKey(kind string) string {
	return "resource.customizations.health.chat.parley.dev_" + kind
}

// health is what Argo CD's health check reports.
type health struct{ status, message string }

// runHealth runs script on obj as Argo CD runs a health check from argocd-cm (its util/lua): a Lua state without
// the standard libraries but package, base and table, the object as the global obj, a second to finish, and a
// table returned whose status Argo CD knows. Argo CD also opens a reduced os library, which Parley's script does
// not use: left out here, a script that came to need it fails this test.
func runHealth(script string, obj map[string]any) (health, error) {
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.LoadLibName, lua.OpenPackage}, {lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}} {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(lib.open), Protect: true}, lua.LString(lib.name)); err != nil {
			return health{}, fmt.Errorf("opening %s: %w", lib.name, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	l.SetContext(ctx)
	l.SetGlobal("obj", luaValue(l, obj))
	if err := l.DoString(script); err != nil {
		return health{}, err
	}
	table, ok := l.Get(-1).(*lua.LTable)
	if !ok {
		return health{}, fmt.Errorf("the script returned a %s, not a table", l.Get(-1).Type())
	}
	status, _ := table.RawGetString("status").(lua.LString)
	message, _ := table.RawGetString("message").(lua.LString)
	if !knownStatuses[string(status)] {
		return health{}, fmt.Errorf("the script returned status %q, which Argo CD reports as Unknown", status)
	}
	return health{status: string(status), message: string(message)}, nil
}

// luaValue converts an unstructured object's value as Argo CD does (its decodeValue): numbers, integers included,
// become Lua numbers, maps and lists tables.
func luaValue(l *lua.LState, value any) lua.LValue {
	switch v := value.(type) {
	case bool:
		return lua.LBool(v)
	case float64:
		return lua.LNumber(v)
	case int64:
		return lua.LNumber(v)
	case int32:
		return lua.LNumber(v)
	case int:
		return lua.LNumber(v)
	case string:
		return lua.LString(v)
	case json.Number:
		return lua.LString(v)
	case []any:
		t := l.CreateTable(len(v), 0)
		for _, item := range v {
			t.Append(luaValue(l, item))
		}
		return t
	case map[string]any:
		t := l.CreateTable(0, len(v))
		for key, item := range v {
			t.RawSetH(lua.LString(key), luaValue(l, item))
		}
		return t
	}
	return lua.LNil
}

var errNoScript = errors.New("the chart renders no health check for this kind")
