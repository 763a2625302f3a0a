// report_test.mjs - the profile report in a real browser: Debian's chromium,
// headless, driven by playwright-core (tests/browser/package.json). Opens
// report.html from a profile folder and checks, from the page itself:
//   - no console error, no uncaught exception, no request at all but the
//     file itself (the page must work offline);
//   - every view says it rendered (data-rendered), and what it drew matches
//     profile.json: the op and kernel tables' cycles add up to the run's,
//     the floorplan and the memory chart have a cell or bar per tile, the
//     liveness chart a point per step, the timeline its bars;
//   - sorting a table by a column sorts it; zooming the timeline zooms;
//     choosing another heatmap redraws it;
// then keeps a screenshot of the whole page.
//
//   node report_test.mjs DIR [--screenshot OUT.png] [--chromium PATH]
//
// Exit status 0 when every check holds, 1 with the failures listed.
import { chromium } from "playwright-core";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const args = process.argv.slice(2);
const dir = args[0];
const opt = (name, dflt) => {
	const i = args.indexOf(name);
	return i >= 0 ? args[i + 1] : dflt;
};
const shot = opt("--screenshot", null);
const exe = opt("--chromium", "/usr/bin/chromium");
if (!dir) {
	console.error("usage: node report_test.mjs DIR [--screenshot OUT.png]");
	process.exit(2);
}
const prof = JSON.parse(readFileSync(resolve(dir, "profile.json"), "utf8"));
const url = pathToFileURL(resolve(dir, "report.html")).href;
const failures = [];
const check = (ok, what) => {
	if (!ok) failures.push(what);
};

const browser = await chromium.launch({
	executablePath: exe,
	headless: true,
	args: [
		"--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update",
		"--disable-sync",
	],
});
const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
const consoleErrors = [], requests = [];
page.on("console", (m) => {
	if (m.type() === "error" || m.type() === "warning")
		consoleErrors.push(`${m.type()}: ${m.text()}`);
});
page.on("pageerror", (e) => consoleErrors.push("exception: " + e.message));
page.on("request", (r) => {
	if (r.url() !== url) requests.push(r.url());
});
await page.goto(url);
await page.waitForSelector("body[data-rendered='1']", { timeout: 30000 });

const unfit = prof.run.status === "unfit";
const views = unfit
	? ["summary", "floorplan", "memory", "liveness"]
	: ["summary", "tables", "timeline", "floorplan", "memory", "liveness"];
const dom = await page.evaluate((views) => {
	const q = (s) => document.querySelector(s);
	const data = (s, k) => (q(s) ? q(s).dataset[k] : undefined);
	return {
		rendered: views.map((v) => [v, data("#" + v, "rendered")]),
		opTotal: Number(data("#table-op", "total")),
		kernelTotal: Number(data("#table-kernel", "total")),
		opRows: document.querySelectorAll("#table-op tbody tr").length,
		kernelRows: document.querySelectorAll("#table-kernel tbody tr").length,
		floorTiles: Number(data("#floorplan canvas", "tiles")),
		memTiles: Number(data("#memory canvas", "tiles")),
		liveSteps: Number(data("#liveness canvas", "steps")),
		bars: Number(data("#timeline canvas", "bars")),
		fullestRows: document.querySelectorAll("#fullest tbody tr").length,
		banner: q(".banner") ? q(".banner").textContent : "",
	};
}, views);
for (const [v, r] of dom.rendered) check(r === "1", `view ${v} did not render`);
check(dom.floorTiles === prof.run.tiles,
	`floorplan: ${dom.floorTiles} tiles, the profile has ${prof.run.tiles}`);
check(dom.memTiles === prof.run.tiles, `memory chart: ${dom.memTiles} tiles`);
check(dom.liveSteps === prof.steps.length, `liveness: ${dom.liveSteps} steps`);
check(dom.fullestRows === prof.memory.fullest.length,
	`fullest tiles: ${dom.fullestRows} rows`);
if (unfit) {
	check(dom.banner.includes("does not fit"), "no banner for a program that does not fit");
} else {
	check(dom.opTotal === prof.run.cycles,
		`the op table adds up to ${dom.opTotal}, the run took ${prof.run.cycles}`);
	check(dom.kernelTotal === prof.run.cycles,
		`the kernel table adds up to ${dom.kernelTotal}`);
	check(dom.opRows > 0 && dom.kernelRows > 0, "empty tables");
	check(dom.bars >= prof.instances.length,
		`timeline: ${dom.bars} bars for ${prof.instances.length} step instances`);
	// sort the op table by MACs: the column must then be in order
	await page.click("#table-op th[data-col='macs']");
	const macs = await page.$$eval("#table-op tbody tr td:nth-child(6)", (tds) =>
		tds.map((td) => Number(td.textContent.replace(/,/g, "")) || 0));
	check(macs.every((v, i) => i === 0 || macs[i - 1] >= v),
		"sorting by MACs did not sort: " + macs.join(" "));
	// zoom: the chip lane then shows part of the run, so fewer bars fit
	const before = dom.bars;
	for (let i = 0; i < 4; i++) await page.click("#zoom-in");
	const after = Number(await page.$eval("#timeline canvas", (c) => c.dataset.bars));
	check(after < before || prof.instances.length < 2,
		`zooming in drew ${after} bars, the whole run ${before}`);
	await page.click("#zoom-reset");
}
// another heatmap
const options = await page.$$eval("#floor-metric option", (o) => o.map((x) => x.value));
await page.selectOption("#floor-metric", options[Math.min(4, options.length - 1)]);
await page.hover("#floorplan canvas", { position: { x: 60, y: 30 } });

check(consoleErrors.length === 0, "console: " + consoleErrors.join("; "));
check(requests.length === 0, "requests: " + requests.join(" "));
if (shot) await page.screenshot({ path: shot, fullPage: true });
await browser.close();
console.log(JSON.stringify({ report: url, status: prof.run.status, checks: failures.length ? "failed" : "passed", ...dom, requests: requests.length, console: consoleErrors.length }));
if (failures.length) {
	for (const f of failures) console.error("FAIL: " + f);
	process.exit(1);
}
