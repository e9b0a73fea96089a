package ui

// ShownText is shownText, for the tests.
var ShownText = shownText
