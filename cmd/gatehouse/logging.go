package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"

	"github.com/gatehouse-dev/gatehouse/internal/web"
)

// logs is the stderr logging of one CLI process: one level for every
// logger of the process (the app's, the slog default the log package
// writes through) and one record of the warnings already printed.
//
// The level is warn unless asked otherwise: -v/--verbose (info),
// GATEHOUSE_LOG_LEVEL=debug|info|warn|error, GATEHOUSE_DEBUG=1 (debug).
// Info lines (a cache hit, a browser session created, an MCP tool call)
// describe normal work and are not printed by default; a warning (the
// browser sandbox off as root) is printed once per process however often
// it is logged (onceWarn).
type logs struct {
	level  *slog.LevelVar
	logger *slog.Logger
}

// newLogs returns the logging of a process writing to w, at the level the
// environment asks for (default warn; see logs).
func newLogs(w io.Writer) *logs {
	lv := new(slog.LevelVar)
	lv.Set(envLogLevel())
	h := slog.NewTextHandler(w, &slog.HandlerOptions{Level: lv})
	return &logs{level: lv, logger: web.RedactLogger(slog.New(onceWarn{h: h, seen: &seenSet{m: map[string]bool{}}}))}
}

// verbose lowers the level to info (-v) unless the environment already
// asked for more (debug).
func (l *logs) verbose() {
	if l.level.Level() > slog.LevelInfo {
		l.level.Set(slog.LevelInfo)
	}
}

// envLogLevel is the level GATEHOUSE_LOG_LEVEL and GATEHOUSE_DEBUG ask for,
// warn when neither does.
func envLogLevel() slog.Level {
	level := slog.LevelWarn
	switch strings.ToLower(os.Getenv("GATEHOUSE_LOG_LEVEL")) {
	case "debug":
		level = slog.LevelDebug
	case "info":
		level = slog.LevelInfo
	case "error":
		level = slog.LevelError
	}
	if os.Getenv("GATEHOUSE_DEBUG") == "1" {
		level = slog.LevelDebug
	}
	return level
}

// maxSeenWarnings bounds the set of distinct warnings remembered by
// onceWarn (a long-running server logging warnings with ever new attribute
// values would otherwise grow it without end); past it, warnings are
// printed every time.
const maxSeenWarnings = 4096

type seenSet struct {
	mu sync.Mutex
	m  map[string]bool
}

// first reports whether key is new, and remembers it.
func (s *seenSet) first(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m[key] {
		return false
	}
	if len(s.m) < maxSeenWarnings {
		s.m[key] = true
	}
	return true
}

// onceWarn is a slog.Handler that passes a warning or error record to h
// only the first time this process logs it: the same message with the same
// attributes (those of the record and those added with WithAttrs, under
// their groups; the time is not part of it). Records below warn pass
// unchanged. Safe for concurrent use.
type onceWarn struct {
	h      slog.Handler
	seen   *seenSet
	prefix string // attributes and groups added by WithAttrs/WithGroup
}

func (o onceWarn) Enabled(ctx context.Context, l slog.Level) bool { return o.h.Enabled(ctx, l) }

func (o onceWarn) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		var b strings.Builder
		b.WriteString(r.Level.String() + "\x00" + o.prefix + "\x00" + r.Message)
		r.Attrs(func(a slog.Attr) bool {
			b.WriteString("\x00" + a.String())
			return true
		})
		if !o.seen.first(b.String()) {
			return nil
		}
	}
	return o.h.Handle(ctx, r)
}

func (o onceWarn) WithAttrs(as []slog.Attr) slog.Handler {
	for _, a := range as {
		o.prefix += "\x00" + a.String()
	}
	o.h = o.h.WithAttrs(as)
	return o
}

func (o onceWarn) WithGroup(name string) slog.Handler {
	o.prefix += "\x00group:" + name
	o.h = o.h.WithGroup(name)
	return o
}
