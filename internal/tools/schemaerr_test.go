package tools

import "testing"

func TestReadableSchemaError(t *testing.T) {
	for in, want := range map[string]string{
		"validating root: validating /properties/max_age_s: minimum: -5/1 is less than 0.000000":                      "max_age_s: -5 is less than the minimum 0",
		"validating root: validating /properties/char_limit: maximum: 5000/1 is greater than 2000.000000":             "char_limit: 5000 is greater than the maximum 2000",
		"validating root: validating /properties/render: enum: bogus does not equal any of: [auto always never]":      "render: bogus is not one of [auto always never]",
		"validating root: required: missing properties: [\"urls\"]":                                                   "required: missing properties: [\"urls\"]",
		"validating root: validating /properties/query: minLength: \"\" contains 0 Unicode code points, fewer than 1": "query: is empty",
		"validating root: validating /properties/ref: minLength: \"e\" contains 1 Unicode code points, fewer than 2":  "ref: \"e\" is shorter than the minimum of 2 characters",
		"validating root: validating /properties/q: maxLength: \"aaaa\" contains 4 Unicode code points, more than 3":  "q: is 4 characters long, more than the maximum of 3",
	} {
		if got := readableSchemaError(in); got != want {
			t.Errorf("readableSchemaError(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}
