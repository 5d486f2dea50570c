// Gatehouse's stand-in for github.com/markusmobius/go-htmldate (see README.md).
module github.com/markusmobius/go-htmldate

go 1.22.0

require golang.org/x/net v0.62.0
