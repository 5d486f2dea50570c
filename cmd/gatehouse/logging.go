package main

import (
	"bytes"
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
//
// logger, the logger of Gatehouse's own code, prints a warning or error in
// the CLI's one form for them, "gatehouse: warning: MESSAGE (k=v …)" or
// "gatehouse: error: …" (humanWarn), as the config and .env warnings are
// printed; info and debug lines are slog text records. std, the slog
// default the log package and dependencies write through, keeps every
// record a slog text record (time=… level=… msg=…): those lines are a
// library's diagnostics, not Gatehouse's warnings.
type logs struct {
	level  *slog.LevelVar
	logger *slog.Logger
	std    *slog.Logger
}

// newLogs returns the logging of a process writing to w, at the level the
// environment asks for (default warn; see logs).
func newLogs(w io.Writer) *logs {
	lv := new(slog.LevelVar)
	lv.Set(envLogLevel())
	h := slog.NewTextHandler(w, &slog.HandlerOptions{Level: lv})
	seen := &seenSet{m: map[string]bool{}}
	return &logs{
		level:  lv,
		logger: web.RedactLogger(slog.New(onceWarn{h: humanWarn{w: w, mu: &sync.Mutex{}, h: h}, seen: seen})),
		std:    web.RedactLogger(slog.New(onceWarn{h: h, seen: seen})),
	}
}

// humanWarn is a slog.Handler that prints a record at warn or above as one
// line "gatehouse: warning: MESSAGE (k=v k2=v2)" ("gatehouse: error: …" at
// error), the form of every other warning the CLI prints, its attributes
// (those added with WithAttrs too, group-qualified) formatted and quoted as
// slog's text handler does, without time and level; lower records go to h
// unchanged.
type humanWarn struct {
	w   io.Writer
	mu  *sync.Mutex
	h   slog.Handler
	ops []func(slog.Handler) slog.Handler // WithAttrs/WithGroup, replayed on the attribute formatter
}

func (o humanWarn) Enabled(ctx context.Context, l slog.Level) bool { return o.h.Enabled(ctx, l) }

func (o humanWarn) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelWarn {
		return o.h.Handle(ctx, r)
	}
	var attrs bytes.Buffer
	var f slog.Handler = slog.NewTextHandler(&attrs, &slog.HandlerOptions{ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) == 0 && (a.Key == slog.TimeKey || a.Key == slog.LevelKey || a.Key == slog.MessageKey) {
			return slog.Attr{}
		}
		return a
	}})
	for _, op := range o.ops {
		f = op(f)
	}
	bare := slog.NewRecord(r.Time, r.Level, "", r.PC)
	r.Attrs(func(a slog.Attr) bool { bare.AddAttrs(a); return true })
	if err := f.Handle(ctx, bare); err != nil {
		return err
	}
	kind := "warning"
	if r.Level >= slog.LevelError {
		kind = "error"
	}
	line := "gatehouse: " + kind + ": " + r.Message
	if a := strings.TrimSpace(attrs.String()); a != "" {
		line += " (" + a + ")"
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	_, err := io.WriteString(o.w, line+"\n")
	return err
}

func (o humanWarn) WithAttrs(as []slog.Attr) slog.Handler {
	o.h = o.h.WithAttrs(as)
	o.ops = append(o.ops[:len(o.ops):len(o.ops)], func(h slog.Handler) slog.Handler { return h.WithAttrs(as) })
	return o
}

func (o humanWarn) WithGroup(name string) slog.Handler {
	o.h = o.h.WithGroup(name)
	o.ops = append(o.ops[:len(o.ops):len(o.ops)], func(h slog.Handler) slog.Handler { return h.WithGroup(name) })
	return o
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
