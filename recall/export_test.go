package recall

// ShownOf is Memory.shown, for the tests of package recall_test, which make memory repos
// with flush, a package that imports this one.
var ShownOf = (*Memory).shown

// CommittedJSON is committedJSON, for TestCommittedAsTheJournalHoldsIt.
var CommittedJSON = committedJSON
