// Package layout holds the tests of the repository's layout rules (issue 13; docs/ARCHITECTURE.md):
// the data flow's direction in the imports, no development tool in the production binary, and
// source files short enough to read.
package layout
