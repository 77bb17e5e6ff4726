package mcp

// CompareSummaries lets the black-box tests compute compare_periods' answer from two REST bodies.
var CompareSummaries = compareSummaries
