/*
 * report.js - the profile report (docs/profile.md, "The report"): drawn
 * from profile.json, which the page carries in its #profile-data block.
 * Plain DOM and canvas, no library and no request: summary, tables by op,
 * kernel and step (sortable), a zoomable timeline of the chip and the lane
 * tiles, the tiles on the die's floorplan as heatmaps, memory by category
 * per tile and live bytes over the steps. Each view marks its root element
 * with data-rendered="1" once drawn (the browser test checks them).
 */
"use strict";

const P = JSON.parse(document.getElementById("profile-data").textContent);
const RUN = P.run;
const TILES = RUN.tiles;

/* ---- small helpers ---- */

function el(tag, attrs, ...kids) {
	const e = document.createElement(tag);
	for (const [k, v] of Object.entries(attrs || {})) {
		if (k === "class") e.className = v;
		else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
		else e.setAttribute(k, v);
	}
	for (const k of kids)
		if (k !== null && k !== undefined)
			e.append(k instanceof Node ? k : document.createTextNode(String(k)));
	return e;
}

function fmt(n) {
	if (n === null || n === undefined || Number.isNaN(n)) return "-";
	return Math.round(n).toLocaleString("en-US");
}

function bytes(n) {
	if (Math.abs(n) >= 1 << 20) return (n / (1 << 20)).toFixed(2) + " MiB";
	if (Math.abs(n) >= 1 << 10) return (n / (1 << 10)).toFixed(1) + " KiB";
	return fmt(n) + " B";
}

function pct(x) {
	return Number.isFinite(x) ? (100 * x).toFixed(1) + "%" : "-";
}

function us(cycles) {
	return (cycles / RUN.clock_hz) * 1e6;
}

const tip = el("div", { id: "tip" });

function showTip(ev, text) {
	tip.textContent = text;
	tip.style.display = "block";
	const x = Math.min(ev.clientX + 14, window.innerWidth - 440);
	tip.style.left = x + "px";
	tip.style.top = ev.clientY + 14 + "px";
}

function hideTip() {
	tip.style.display = "none";
}

/* A canvas sized for the device's pixels. */
function canvas(w, h) {
	const c = el("canvas");
	const r = window.devicePixelRatio || 1;
	c.width = Math.round(w * r);
	c.height = Math.round(h * r);
	c.style.width = w + "px";
	c.style.height = h + "px";
	const g = c.getContext("2d");
	g.scale(r, r);
	return [c, g];
}

/* Colours. */
const KIND = {
	exchange: "#4e79a7",
	sync: "#bab0ac",
	compute: "#59a14f",
	loop: "#f28e2b",
	superstep: "#76b7b2",
	send: "#e15759",
	host: "#b07aa1",
};
const MEM = {
	code: "#4e79a7",
	"exchange code": "#76b7b2",
	"kernel arguments": "#edc948",
	weights: "#f28e2b",
	activations: "#59a14f",
	stack: "#b07aa1",
	free: "#e8ebf0",
};

/* A perceptual ramp (dark blue to yellow), t in [0, 1]. */
const RAMP = [
	[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37],
];
function ramp(t) {
	t = Math.max(0, Math.min(1, t)) * (RAMP.length - 1);
	const i = Math.min(Math.floor(t), RAMP.length - 2), f = t - i;
	const c = RAMP[i].map((v, k) => Math.round(v + f * (RAMP[i + 1][k] - v)));
	return `rgb(${c[0]},${c[1]},${c[2]})`;
}

function stepName(s) {
	const st = P.steps[s];
	const ops = st.ops.map((o) => P.ops[o].name).join(", ");
	return `${s} ${st.what}` + (ops ? ` [${ops}]` : "");
}

function section(id, title, ...kids) {
	return el("section", { id }, el("h2", {}, title), ...kids);
}

/* ---- groups (as `ipu profile query` makes them) ---- */

function groupKey(st, by) {
	if (by === "op") {
		const k = st.ops.map((o) => P.ops[o].name).join(", ");
		return k || `(${st.kind})`;
	}
	if (by === "kernel") {
		const k = st.kernels.map((o) => P.kernels[o].name).join(", ");
		return k || `(${st.kind})`;
	}
	if (by === "step") return `${st.index} ${st.what}`;
	return st.kind;
}

function groups(by) {
	const rows = new Map();
	const add = (key, st, cycles, pred, whole) => {
		let r = rows.get(key);
		if (!r) {
			r = { key, cycles: 0, predicted: 0, hasPred: false, macs: 0,
				ideal: 0, bytes: 0, steps: 0, runs: 0, index: st.index };
			rows.set(key, r);
		}
		r.cycles += cycles;
		r.steps += 1;
		r.runs += st.runs;
		r.predicted += pred * st.runs;
		r.hasPred = r.hasPred || pred > 0;
		if (whole) {
			r.macs += st.macs * st.runs;
			r.ideal += st.ideal_cycles;
			r.bytes += st.bytes_sent;
		}
	};
	for (const st of P.steps) {
		let cyc = st.cycles, over = st.predicted_overhead;
		if (by === "kind" && st.sync_cycles > 0) {
			add("sync", st, st.sync_cycles, over, false);
			cyc -= st.sync_cycles;
			over = 0;
		}
		add(groupKey(st, by), st, cyc, st.predicted_cycles + over, true);
	}
	return [...rows.values()];
}

/* ---- summary ---- */

function summary() {
	const s = RUN;
	const card = (k, v, sub) =>
		el("div", { class: "card" }, el("div", { class: "k" }, k),
			el("div", { class: "v" }, v), sub ? el("div", { class: "s" }, sub) : null);
	const err = s.predicted_cycles && s.cycles
		? ((s.cycles / s.predicted_cycles - 1) * 100).toFixed(2) + "% vs predicted"
		: "";
	const fullest = P.memory.fullest[0];
	const ran = s.status !== "unfit";
	const cards = el("div", { class: "cards" },
		card("status", s.status, s.timing + " timing"),
		ran ? card("cycles (emulated)", fmt(s.cycles), err) : null,
		ran ? card("cycles (predicted)", fmt(s.predicted_cycles),
			"by the compiler's cost model") : null,
		ran ? card("time at " + (s.clock_hz / 1e6).toFixed(0) + " MHz",
			us(s.cycles).toFixed(1) + " µs", s.chip + " (" + s.arch + ")") : null,
		s.images_per_second
			? card("images/s", s.images_per_second.toFixed(1), "batch " + s.batch)
			: null,
		ran ? card("MFU", pct(s.mfu), fmt(s.macs) + " matmul MACs") : null,
		card("tiles", fmt(s.tiles), "of " + fmt(s.chip_tiles)),
		fullest
			? card("fullest tile", bytes(fullest.bytes), `tile ${fullest.tile}, ` +
				(fullest.free >= 0 ? `${bytes(fullest.free)} free`
					: `${bytes(-fullest.free)} over its memory`))
			: null,
		s.compile_seconds !== undefined
			? card("compile", s.compile_seconds.toFixed(2) + " s",
				"emulation " + s.host_seconds.toFixed(1) + " s")
			: null);
	const root = section("summary", "Summary",
		el("div", { class: "note" },
			`${s.command} ${s.source}` + (s.dtype ? `, ${s.dtype}` : "")),
		cards);
	if (s.message) {
		const bad = s.status !== "done";
		root.append(el("div", { class: "banner" + (bad ? " bad" : "") },
			(s.status === "unfit" ? "The program does not fit the chip's memory; " +
				"the memory views below show the failed placement.\n" : "") +
			s.message));
	}
	root.dataset.rendered = "1";
	return root;
}

/* ---- tables ---- */

const COLS = [
	["key", "", false],
	["cycles", "cycles", true],
	["share", "share", true],
	["predicted", "predicted", true],
	["error", "error", true],
	["macs", "MACs", true],
	["mfu", "MFU", true],
	["bytes", "bytes sent", true],
	["runs", "runs", true],
];

function table(by, title) {
	const rows = groups(by).map((r) => ({
		...r,
		share: RUN.cycles ? r.cycles / RUN.cycles : 0,
		error: r.hasPred && r.predicted ? r.cycles / r.predicted - 1 : NaN,
		mfu: r.cycles ? r.ideal / r.cycles : 0,
		predicted: r.hasPred ? r.predicted : NaN,
	}));
	let sortBy = by === "step" ? "index" : "cycles", asc = by === "step";
	const t = el("table", { id: "table-" + by });
	const head = el("tr");
	const body = el("tbody");
	const draw = () => {
		rows.sort((a, b) => {
			const x = a[sortBy], y = b[sortBy];
			const c = typeof x === "string" ? x.localeCompare(y)
				: (Number.isNaN(x) ? -Infinity : x) - (Number.isNaN(y) ? -Infinity : y);
			return asc ? c : -c;
		});
		body.replaceChildren(...rows.map((r) => el("tr", {},
			el("td", { class: "name", title: r.key }, r.key),
			el("td", { class: "n" }, fmt(r.cycles)),
			el("td", { class: "n" }, pct(r.share)),
			el("td", { class: "n" }, fmt(r.predicted)),
			el("td", { class: "n" }, Number.isNaN(r.error) ? "-"
				: (r.error >= 0 ? "+" : "") + (100 * r.error).toFixed(1) + "%"),
			el("td", { class: "n" }, fmt(r.macs)),
			el("td", { class: "n" }, r.macs ? pct(r.mfu) : "-"),
			el("td", { class: "n" }, fmt(r.bytes)),
			el("td", { class: "n" }, fmt(r.runs)))));
		for (const th of head.children) {
			th.classList.toggle("sorted", th.dataset.col === sortBy);
			th.classList.toggle("asc", asc);
		}
	};
	for (const [col, label, num] of COLS) {
		const th = el("th", { class: num ? "n" : "", "data-col": col },
			col === "key" ? by : label);
		th.addEventListener("click", () => {
			if (sortBy === col) asc = !asc;
			else { sortBy = col; asc = !num; }
			draw();
		});
		head.append(th);
	}
	t.append(el("thead", {}, head), body);
	draw();
	const total = rows.reduce((s, r) => s + r.cycles, 0);
	t.dataset.total = String(total);
	return el("div", {}, el("h3", {}, title),
		el("div", { class: "scroll" }, t));
}

function tables() {
	const root = section("tables", "Where the cycles go",
		el("div", { class: "note" },
			"A step's cycles are the chip's from the moment its last tile left the " +
			"step before to the moment its last tile left it; they add up to the " +
			"run's. Ops that share a step (GEMMs run in one phase) are one row; a " +
			"loop's steps count every iteration. Predicted: the compiler's cost " +
			"model for the same steps (the sync before each exchange included). " +
			"Click a column to sort."),
		el("div", { class: "tables" }, table("op", "By op"), table("kernel", "By kernel")),
		el("details", {}, el("summary", {}, "By step and by kind"),
			el("div", { class: "tables" }, table("step", "By step"),
				table("kind", "By kind"))));
	root.dataset.rendered = "1";
	return root;
}

/* ---- timeline ---- */

function timeline() {
	const lanes = P.tiles.lanes;
	const W = Math.max(600, Math.min(1400, window.innerWidth - 60));
	const laneH = 22, top = 22, chipH = 28;
	const shown = new Set(lanes.map((l) => l.tile));
	const root = section("timeline", "Timeline");
	const info = el("div", { class: "note" },
		"The chip's steps (an exchange's barrier in grey), then each lane tile: " +
		"its steps as it ran them, with compute (workers running), sync waits " +
		"and sends. Wheel or buttons to zoom, drag to pan, hover for details. " +
		"Lanes are the tiles chosen with --profile-tiles.");
	let view = [0, Math.max(1, RUN.cycles)];
	const H = () => top + chipH + 8 + [...shown].length * (laneH * 2 + 6) + 10;
	let [c, g] = canvas(W, H());
	const hits = [];
	const X = (cyc) => ((cyc - view[0]) / (view[1] - view[0])) * (W - 90) + 80;
	const draw = () => {
		const h = H();
		if (c.height !== Math.round(h * (window.devicePixelRatio || 1))) {
			const [nc, ng] = canvas(W, h);
			c.replaceWith(nc);
			c = nc; g = ng;
			attach();
		}
		g.clearRect(0, 0, W, h);
		hits.length = 0;
		g.font = "11px system-ui, sans-serif";
		g.fillStyle = "#5f6b7a";
		/* axis: cycles and microseconds */
		for (let i = 0; i <= 8; i++) {
			const cyc = view[0] + ((view[1] - view[0]) * i) / 8, x = X(cyc);
			g.fillRect(x, top - 4, 1, 4);
			g.fillText(fmt(cyc) + " (" + us(cyc).toFixed(1) + "µs)", x + 2, top - 8);
		}
		const bar = (y, hgt, a, b, color, text) => {
			if (b < view[0] || a > view[1]) return;
			const x0 = Math.max(80, X(a)), x1 = Math.min(W - 10, X(b));
			g.fillStyle = color;
			g.fillRect(x0, y, Math.max(1, x1 - x0), hgt);
			hits.push([x0, y, Math.max(2, x1 - x0), hgt, text]);
		};
		g.fillStyle = "#1d2330";
		g.fillText("chip", 6, top + 16);
		for (const inst of P.instances) {
			const st = P.steps[inst.step];
			const text = stepName(inst.step) +
				(st.runs > 1 ? `\niteration ${inst.iteration}` : "") +
				`\ncycles ${fmt(inst.end - inst.start)} (${fmt(inst.start)}..${fmt(inst.end)})` +
				`\nbusiest tile ${fmt(inst.busy_max)}, mean ${fmt(inst.busy_mean)}` +
				(inst.bytes_sent ? `\nbytes sent ${fmt(inst.bytes_sent)}` : "");
			bar(top, chipH, inst.start, inst.end, KIND[st.kind] || "#999", text);
			if (inst.sync_end >= inst.start)
				bar(top, chipH, inst.start, inst.sync_end, KIND.sync,
					"sync (barrier) before\n" + text);
		}
		let y = top + chipH + 8;
		for (const l of lanes) {
			if (!shown.has(l.tile)) continue;
			g.fillStyle = "#1d2330";
			g.fillText("tile " + l.tile, 6, y + 14);
			for (const [k, a, b] of l.steps) {
				const inst = P.instances[k];
				if (!inst) continue;
				const st = P.steps[inst.step];
				bar(y, laneH, a, b, KIND[st.kind] || "#999",
					`tile ${l.tile}: ${stepName(inst.step)}` +
					(st.runs > 1 ? `, iteration ${inst.iteration}` : "") +
					`\ncycles ${fmt(b - a)} (${fmt(a)}..${fmt(b)})`);
			}
			for (const [kind, a, b, arg] of l.events) {
				const color = kind === "compute" ? "#2d6a2a" : kind === "sync" ? "#8d8580"
					: KIND[kind] || "#555";
				bar(y + laneH + 2, laneH - 6, a, b, color,
					`tile ${l.tile}: ${kind}` +
					(kind === "sync" ? ` (zone ${arg})` : kind === "send" ? ` ${fmt(arg)} bytes` : "") +
					`\ncycles ${fmt(b - a)} (${fmt(a)}..${fmt(b)})`);
			}
			y += laneH * 2 + 6;
		}
		c.dataset.bars = String(hits.length);
	};
	const zoom = (f, at) => {
		const span = view[1] - view[0];
		const mid = at === undefined ? (view[0] + view[1]) / 2 : at;
		let ns = Math.max(10, Math.min(RUN.cycles, span * f));
		let a = mid - ((mid - view[0]) / span) * ns;
		a = Math.max(0, Math.min(RUN.cycles - ns, a));
		view = [a, a + ns];
		draw();
	};
	let drag = null;
	const attach = () => {
		c.addEventListener("wheel", (ev) => {
			ev.preventDefault();
			const r = c.getBoundingClientRect();
			const at = view[0] + ((ev.clientX - r.left - 80) / (W - 90)) * (view[1] - view[0]);
			zoom(ev.deltaY > 0 ? 1.25 : 0.8, at);
		}, { passive: false });
		c.addEventListener("mousedown", (ev) => { drag = [ev.clientX, view.slice()]; });
		window.addEventListener("mouseup", () => { drag = null; });
		c.addEventListener("mousemove", (ev) => {
			const r = c.getBoundingClientRect();
			if (drag) {
				const d = ((ev.clientX - drag[0]) / (W - 90)) * (drag[1][1] - drag[1][0]);
				let a = Math.max(0, Math.min(RUN.cycles - (drag[1][1] - drag[1][0]), drag[1][0] - d));
				view = [a, a + (drag[1][1] - drag[1][0])];
				draw();
				return;
			}
			const x = ev.clientX - r.left, y = ev.clientY - r.top;
			for (let i = hits.length - 1; i >= 0; i--) {
				const [hx, hy, hw, hh, text] = hits[i];
				if (x >= hx && x <= hx + hw && y >= hy && y <= hy + hh) {
					showTip(ev, text);
					return;
				}
			}
			hideTip();
		});
		c.addEventListener("mouseleave", hideTip);
	};
	attach();
	const picks = el("span", {}, ...lanes.map((l) => {
		const box = el("input", { type: "checkbox", checked: "" });
		box.addEventListener("change", () => {
			if (box.checked) shown.add(l.tile); else shown.delete(l.tile);
			draw();
		});
		return el("label", {}, box, " tile " + l.tile + " ");
	}));
	const controls = el("div", { class: "controls" },
		el("button", { id: "zoom-in", onclick: () => zoom(0.5) }, "zoom in"),
		el("button", { id: "zoom-out", onclick: () => zoom(2) }, "zoom out"),
		el("button", { id: "zoom-reset", onclick: () => { view = [0, Math.max(1, RUN.cycles)]; draw(); } }, "whole run"),
		el("label", {}, "lanes:"), picks);
	const legend = el("div", { class: "legend" }, ...["exchange", "sync", "compute", "loop", "superstep"]
		.map((k) => el("span", {}, el("span", { class: "sw", style: "background:" + KIND[k] }), k)));
	root.append(info, controls, legend, c);
	draw();
	root.dataset.rendered = "1";
	return root;
}

/* ---- floorplan ---- */

function floorplan() {
	const fp = P.tiles.floorplan, t = P.tiles, mem = P.memory.per_tile;
	const used = t.x.map((_, i) => P.memory.peak[i] +
		mem.code[i] + mem["exchange code"][i]);
	const metrics = {
		"busy cycles": t.busy,
		"compute cycles (workers)": t.compute,
		"waiting in barriers": t.barrier_wait,
		"bytes sent": t.bytes_sent,
		"memory used (code + data at peak)": used,
		"memory free": mem.free,
	};
	P.steps.forEach((st, s) => {
		metrics[`busy in step ${stepName(s)}`] = t.step_busy[s];
	});
	const cell = 16, gap = 1, padX = 40, padY = 10;
	const W = padX + fp.width * cell + 20, H = padY * 2 + fp.height * cell + 10;
	const [c, g] = canvas(W, H);
	const pick = el("select", { id: "floor-metric" },
		...Object.keys(metrics).map((m) => el("option", { value: m }, m)));
	const scale = el("div", { class: "legend" });
	const cellAt = new Map();
	t.x.forEach((x, i) => cellAt.set(x + "," + t.y[i], i));
	const draw = () => {
		const v = metrics[pick.value];
		let lo = Infinity, hi = -Infinity;
		for (const x of v) { lo = Math.min(lo, x); hi = Math.max(hi, x); }
		if (!(hi > lo)) hi = lo + 1;
		g.clearRect(0, 0, W, H);
		g.fillStyle = "#e8ebf0";
		g.fillRect(padX, padY + fp.spine_row * cell, fp.width * cell, cell - gap);
		g.fillStyle = "#5f6b7a";
		g.font = "10px system-ui, sans-serif";
		g.fillText("exchange spine", padX + 4, padY + fp.spine_row * cell + 11);
		for (let pos = 0; pos < 8; pos++)
			g.fillText(String(pos), padX + pos * 4 * cell + 2 * cell - 3, H - 4);
		for (let i = 0; i < v.length; i++) {
			g.fillStyle = ramp((v[i] - lo) / (hi - lo));
			g.fillRect(padX + t.x[i] * cell, padY + t.y[i] * cell, cell - gap, cell - gap);
		}
		scale.replaceChildren(
			el("span", {}, el("span", { class: "sw", style: "background:" + ramp(0) }), fmt(lo)),
			el("span", {}, el("span", { class: "sw", style: "background:" + ramp(0.5) }), fmt((lo + hi) / 2)),
			el("span", {}, el("span", { class: "sw", style: "background:" + ramp(1) }), fmt(hi)),
			el("span", {}, "tiles not used are blank"));
	};
	pick.addEventListener("change", draw);
	c.addEventListener("mousemove", (ev) => {
		const r = c.getBoundingClientRect();
		const x = Math.floor((ev.clientX - r.left - padX) / cell);
		const y = Math.floor((ev.clientY - r.top - padY) / cell);
		const i = cellAt.get(x + "," + y);
		if (i === undefined) { hideTip(); return; }
		showTip(ev, `tile ${i} (physical ${t.physical[i]})\n${pick.value}: ` +
			fmt(metrics[pick.value][i]) +
			`\nbusy ${fmt(t.busy[i])}, compute ${fmt(t.compute[i])}, barrier wait ${fmt(t.barrier_wait[i])}` +
			`\nmemory used ${bytes(used[i])}, free ${bytes(mem.free[i])}`);
	});
	c.addEventListener("mouseleave", hideTip);
	draw();
	const root = section("floorplan", "Tiles on the die",
		el("div", { class: "note" },
			`The ${RUN.chip}'s ${RUN.chip_tiles} tiles as they sit on the die: 16 column ` +
			"groups of 4 tiles, 8 on each side of the exchange spine (position along " +
			"it below), each 23 tiles tall, row 0 next to the spine. Colour: the " +
			"chosen value per tile."),
		el("div", { class: "controls" }, el("label", {}, "show "), pick), scale, c);
	c.dataset.tiles = String(t.x.length);
	root.dataset.rendered = "1";
	return root;
}

/* ---- memory ---- */

function memoryView() {
	const m = P.memory, cats = m.categories, per = m.per_tile;
	const tileBytes = RUN.tile_bytes;
	const order = [...Array(TILES).keys()].sort((a, b) => per.free[a] - per.free[b]);
	const W = Math.max(600, Math.min(1400, window.innerWidth - 60)), H = 240;
	const [c, g] = canvas(W, H);
	const bw = (W - 70) / Math.max(1, TILES);
	/* a tile that does not fit goes past its memory: the scale shows it */
	const used = (t) => cats.reduce((s, k) => s + per[k][t], 0);
	let top = tileBytes;
	for (let t = 0; t < TILES; t++) top = Math.max(top, used(t));
	const Y = (b) => H - 20 - (b / top) * (H - 40);
	g.font = "10px system-ui, sans-serif";
	g.fillStyle = "#5f6b7a";
	for (const f of [0, 0.25, 0.5, 0.75, 1]) {
		g.fillRect(55, Y(f * top), W - 60, 0.5);
		g.fillText(bytes(f * top), 2, Y(f * top) + 3);
	}
	order.forEach((t, i) => {
		let acc = 0;
		for (const cat of cats) {
			const v = per[cat][t];
			g.fillStyle = MEM[cat] || "#999";
			g.fillRect(60 + i * bw, Y(acc + v), Math.max(bw, 0.6), Y(acc) - Y(acc + v));
			acc += v;
		}
	});
	g.fillStyle = "#c9504c";
	g.fillRect(55, Y(tileBytes), W - 60, 1);
	g.fillText("tile memory", W - 70, Y(tileBytes) - 3);
	c.addEventListener("mousemove", (ev) => {
		const r = c.getBoundingClientRect();
		const i = Math.floor((ev.clientX - r.left - 60) / bw);
		if (i < 0 || i >= TILES) { hideTip(); return; }
		const t = order[i];
		showTip(ev, `tile ${t}, at its fullest (step ${m.peak_step[t]}):\n` +
			cats.map((k) => `${k}: ${bytes(per[k][t])}`).join("\n"));
	});
	c.addEventListener("mouseleave", hideTip);
	const totals = cats.map((k) => per[k].reduce((s, v) => s + v, 0));
	const legend = el("div", { class: "legend" }, ...cats.map((k, i) =>
		el("span", {}, el("span", { class: "sw", style: "background:" + MEM[k] }),
			`${k} ${bytes(totals[i] / Math.max(1, TILES))} a tile`)));
	const full = el("table", { id: "fullest" },
		el("thead", {}, el("tr", {}, ...["tile", "used", "free", "at step", ...cats.slice(0, -1)]
			.map((h) => el("th", { class: h === "tile" ? "" : "n" }, h)))),
		el("tbody", {}, ...m.fullest.map((f) => el("tr", {},
			el("td", {}, String(f.tile)),
			el("td", { class: "n" }, bytes(f.bytes)),
			el("td", { class: "n" }, f.free >= 0 ? bytes(f.free) : "over by " + bytes(-f.free)),
			el("td", { class: "n", title: stepName(f.step) }, String(f.step)),
			...cats.slice(0, -1).map((k) => el("td", { class: "n" }, bytes(per[k][f.tile])))))));
	const root = section("memory", "Memory per tile",
		el("div", { class: "note" },
			"Each tile at its fullest step: code (kernels and its own program), the " +
			"exchange steps' code, kernel argument blocks, weights, activations " +
			"(everything the program computes, inputs and outputs included), the " +
			"supervisor's save slot, and what is free; tiles sorted fullest first. " +
			"Buffers whose lifetimes do not overlap share bytes, so a tile's data is " +
			"the most that is live at one step."),
		legend, c, el("h3", {}, "The fullest tiles"), full);
	root.dataset.rendered = "1";
	c.dataset.tiles = String(TILES);
	return root;
}

function liveness() {
	const m = P.memory, S = P.steps.length;
	const W = Math.max(600, Math.min(1400, window.innerWidth - 60)), H = 260;
	const [c, g] = canvas(W, H);
	const code = m.per_tile.code.map((v, i) => v + m.per_tile["exchange code"][i]);
	const series = [];
	const maxOf = [], medOf = [];
	for (let s = 0; s < S; s++) {
		const v = m.live[s].map((x, t) => x + code[t]);
		const sorted = [...v].sort((a, b) => a - b);
		maxOf.push(sorted[sorted.length - 1] || 0);
		medOf.push(sorted[Math.floor((sorted.length - 1) / 2)] || 0);
	}
	series.push(["busiest tile at each step", "#c9504c", maxOf]);
	series.push(["median tile", "#4e79a7", medOf]);
	const fullest = m.fullest.slice(0, 3);
	const pal = ["#f28e2b", "#59a14f", "#b07aa1"];
	fullest.forEach((f, i) => series.push([`tile ${f.tile}`, pal[i],
		m.live.map((row) => row[f.tile] + code[f.tile])]));
	const top = Math.max(RUN.tile_bytes, ...maxOf);
	const X = (s) => 60 + (S > 1 ? (s / (S - 1)) * (W - 80) : (W - 80) / 2);
	const Y = (b) => H - 24 - (b / top) * (H - 40);
	g.font = "10px system-ui, sans-serif";
	g.fillStyle = "#5f6b7a";
	for (const f of [0, 0.25, 0.5, 0.75, 1]) {
		g.fillRect(55, Y(f * top), W - 65, 0.5);
		g.fillText(bytes(f * top), 2, Y(f * top) + 3);
	}
	g.fillStyle = "#c9504c";
	g.fillRect(55, Y(RUN.tile_bytes), W - 65, 1);
	g.fillText("tile memory", W - 80, Y(RUN.tile_bytes) - 3);
	g.fillStyle = "#5f6b7a";
	for (let s = 0; s < S; s += Math.max(1, Math.ceil(S / 16)))
		g.fillText(String(s), X(s) - 3, H - 8);
	for (const [, color, v] of series) {
		g.strokeStyle = color;
		g.lineWidth = 1.5;
		g.beginPath();
		v.forEach((b, s) => (s ? g.lineTo(X(s), Y(b)) : g.moveTo(X(s), Y(b))));
		g.stroke();
	}
	c.addEventListener("mousemove", (ev) => {
		const r = c.getBoundingClientRect();
		const s = Math.round(((ev.clientX - r.left - 60) / (W - 80)) * (S - 1));
		if (s < 0 || s >= S) { hideTip(); return; }
		showTip(ev, stepName(s) + "\n" +
			series.map(([n, , v]) => `${n}: ${bytes(v[s])}`).join("\n"));
	});
	c.addEventListener("mouseleave", hideTip);
	const root = section("liveness", "Live bytes over the steps",
		el("div", { class: "note" },
			"Code plus the data live at each step (x: step index), for the tile " +
			"that holds the most at that step, the median tile and the three fullest " +
			"tiles; the red line is a tile's memory."),
		el("div", { class: "legend" }, ...series.map(([n, color]) =>
			el("span", {}, el("span", { class: "sw", style: "background:" + color }), n))),
		c);
	c.dataset.steps = String(S);
	root.dataset.rendered = "1";
	return root;
}

/* ---- the page ---- */

function page() {
	document.title = `IPU profile: ${RUN.source || RUN.command}`;
	const header = el("header", {},
		el("h1", {}, "IPU profile"),
		el("div", { class: "sub" },
			`${RUN.command} ${RUN.source} on the emulated ${RUN.chip}, ` +
			`${fmt(RUN.cycles)} cycles, ${RUN.status}`),
		el("nav", {}, ...[["summary", "Summary"], ["tables", "Tables"],
			["timeline", "Timeline"], ["floorplan", "Tiles"], ["memory", "Memory"],
			["liveness", "Liveness"]].map(([id, t]) => el("a", { href: "#" + id }, t))));
	const main = el("main");
	document.body.append(header, main, tip);
	const views = RUN.status === "unfit"
		? [summary, floorplan, memoryView, liveness]
		: [summary, tables, timeline, floorplan, memoryView, liveness];
	for (const v of views) main.append(v());
	document.body.dataset.rendered = "1";
}

page();
