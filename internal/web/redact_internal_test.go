package web

import (
	"bytes"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// TestLoggerRedacts: the Service's logger redacts the message, string,
// error and grouped attributes, including attributes bound with With.
func TestLoggerRedacts(t *testing.T) {
	const key = "ghp_AAAAAAAAAAAAAAAAAAAAAAAA"
	var buf bytes.Buffer
	s := New(Deps{Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	l := s.d.Logger.With("bound", "https://x.example/?token="+key)
	l.Info("fetched https://x.example/"+key,
		"url", "https://u:pw@x.example/",
		"err", errors.New("server said "+key),
		slog.Group("g", "inner", key))
	out := buf.String()
	if strings.Contains(out, key) || strings.Contains(out, ":pw@") {
		t.Fatalf("log carries a secret: %s", out)
	}
	if !strings.Contains(out, "[REDACTED]") {
		t.Fatalf("nothing redacted: %s", out)
	}
}

// TestRedactRowsMetaAndLinks: every string field of Meta (FinalURL,
// StoredPath, Notes and each PageMeta field, including ones added later)
// and every link's URL and text are redacted, as content is.
func TestRedactRowsMetaAndLinks(t *testing.T) {
	secrets := []string{
		"https://example.org/?api_key=sk-abcdefghijklmnopqrstuvwxyz123456",
		"https://u:hunter2@x.test/",
		"https://x.test/?token=abc123",
	}
	leaks := []string{"sk-abcdefghijklmnopqrstuvwxyz123456", "hunter2", "abc123"}
	for si, secret := range secrets {
		m := &Meta{}
		mv := reflect.ValueOf(m).Elem()
		var fill func(v reflect.Value)
		fill = func(v reflect.Value) {
			switch v.Kind() {
			case reflect.String:
				v.SetString("see " + secret)
			case reflect.Struct:
				for i := 0; i < v.NumField(); i++ {
					if v.Type().Field(i).IsExported() {
						fill(v.Field(i))
					}
				}
			case reflect.Slice:
				if v.Type().Elem().Kind() == reflect.String {
					v.Set(reflect.ValueOf([]string{"see " + secret}))
				}
			}
		}
		fill(mv)
		rows := []Result{{URL: secret, Meta: m, Links: []Link{{URL: secret, Text: "link " + secret}}}}
		redactRows(rows, false)
		var check func(path string, v reflect.Value)
		check = func(path string, v reflect.Value) {
			switch v.Kind() {
			case reflect.String:
				if strings.Contains(v.String(), leaks[si]) {
					t.Errorf("%s carries the secret: %q", path, v.String())
				}
			case reflect.Struct:
				for i := 0; i < v.NumField(); i++ {
					if v.Type().Field(i).IsExported() {
						check(path+"."+v.Type().Field(i).Name, v.Field(i))
					}
				}
			case reflect.Slice:
				for i := 0; i < v.Len(); i++ {
					check(path, v.Index(i))
				}
			case reflect.Pointer:
				if !v.IsNil() {
					check(path, v.Elem())
				}
			}
		}
		check("row", reflect.ValueOf(&rows[0]).Elem())
		if m.Description != "see "+urlsafe.Redact(secret) {
			t.Errorf("description = %q, want the words kept and the secret redacted", m.Description)
		}
	}
}
