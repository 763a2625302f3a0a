/*
 * fuzz_graph.c - libFuzzer entry point for the graph text parser:
 * arbitrary bytes as a graph file. The parser must report errors and never
 * crash, hang or leak. When the input parses, the graph must pass
 * graph_verify, and printing it and parsing the text again must give the
 * same text (the round trip docs/graph.md promises).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../src/graph/graph.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Graph *g, *back;
	Diag errs[GRAPH_MAX_ERRORS], d;
	int n;
	if (graph_parse((const char *)data, size, "fuzz.graph", &g, errs, &n))
		return 0;
	if (graph_verify(g, &d))
		abort();
	graph_flops(g);
	char *text = graph_print_str(g);
	if (graph_parse(text, strlen(text), "again", &back, errs, &n))
		abort(); /* our own output must parse */
	char *again = graph_print_str(back);
	if (strcmp(text, again))
		abort();
	free(again);
	free(text);
	graph_free(back);
	graph_free(g);
	return 0;
}
