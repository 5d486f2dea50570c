// Gatehouse patch (third_party/README.md): the package's tables are built on
// first use instead of in package init, which Go runs on every start of every
// program that links this package (Gatehouse's `--version` included). The
// tables built, and so every schema, are the same as before.

package jsonschema

import (
	"reflect"
	"regexp"
	"sync"
)

var (
	initialSchemaOnce sync.Once
	schemaFieldsOnce  sync.Once
)

// initialSchemas returns initialSchemaMap, built by initInitialSchemaMap
// (upstream's init in infer.go) on the first call.
func initialSchemas() map[reflect.Type]*Schema {
	initialSchemaOnce.Do(initInitialSchemaMap)
	return initialSchemaMap
}

// fieldInfos returns schemaFieldInfos, built by initSchemaFields (upstream's
// init in schema.go) on the first call.
func fieldInfos() []structFieldInfo {
	schemaFieldsOnce.Do(initSchemaFields)
	return schemaFieldInfos
}

// fieldMap returns schemaFieldMap, built with schemaFieldInfos.
func fieldMap() map[string]reflect.StructField {
	schemaFieldsOnce.Do(initSchemaFields)
	return schemaFieldMap
}

// lazyRegexp is a *regexp.Regexp compiled on first use (after the Go
// distribution's internal/lazyregexp).
type lazyRegexp struct {
	expr string
	once sync.Once
	rx   *regexp.Regexp
}

func lazyMustCompile(expr string) *lazyRegexp { return &lazyRegexp{expr: expr} }

func (r *lazyRegexp) re() *regexp.Regexp {
	r.once.Do(func() { r.rx = regexp.MustCompile(r.expr) })
	return r.rx
}

func (r *lazyRegexp) MatchString(s string) bool { return r.re().MatchString(s) }
