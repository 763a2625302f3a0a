/*
 * report.c - report.html: one self-contained page (docs/profile.md,
 * "The report"). The page is this file's frame around three parts: the
 * style and the script, written for it in src/profile/report/ and
 * embedded at build time, and profile.json itself as a JSON data block.
 * Nothing is fetched: the page's Content-Security-Policy forbids every
 * request, so it opens the same offline.
 */
#include <stdio.h>
#include <string.h>

#include "profile.h"

/* report/report.js and report/report.css (cmake/embed_text.cmake) */
extern const char profile_report_js[], profile_report_css[];

/* The JSON inside a <script> element: "</" would end it early, so it is
 * written as "<\/", the same string in JSON. */
static void
put_json(FILE *f, const char *s)
{
	for (const char *p = s; *p; p++) {
		if (p[0] == '<' && p[1] == '/') {
			fputs("<\\", f);
			continue;
		}
		fputc(*p, f);
	}
}

int
profile_report_write(FILE *f, const char *json_text)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
	      "<meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" "
	      "content=\"default-src 'none'; script-src 'unsafe-inline'; "
	      "style-src 'unsafe-inline'; img-src data:\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width\">\n"
	      "<title>IPU profile</title>\n<style>\n",
	      f);
	fputs(profile_report_css, f);
	fputs("</style>\n</head>\n<body>\n"
	      "<noscript>This report draws itself with JavaScript; "
	      "profile.json beside it holds the same data.</noscript>\n"
	      "<script type=\"application/json\" id=\"profile-data\">",
	      f);
	put_json(f, json_text);
	fputs("</script>\n<script>\n", f);
	fputs(profile_report_js, f);
	fputs("</script>\n</body>\n</html>\n", f);
	return ferror(f) ? IPU_EIO : IPU_OK;
}
