// Pages opened as files (file://) cannot fetch() each other: the browser
// blocks it. Sphinx's search fetches every result page for a summary, so
// there it lists the results without summaries; served over HTTP it keeps them.
// (DOCUMENTATION_OPTIONS is a global const of documentation_options.js.)
if (window.location.protocol === "file:" && typeof DOCUMENTATION_OPTIONS === "object") {
  DOCUMENTATION_OPTIONS.SHOW_SEARCH_SUMMARY = false;
}
