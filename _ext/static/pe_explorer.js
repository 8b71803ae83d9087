// The chapters' Jupyter explorers, on the website without a kernel.
//
// JupyterLab readers move sliders that redraw pe_lib's figures (chapter 4: pe_lib.explorer_widget,
// chapter 9: pe_lib.drawing.base_explorer). The table behind them is cheap, so this script computes it in
// the browser and draws it on a canvas, with the same sliders, ranges and numbers:
//
//   <div class="pe-explorer" data-explorer="table"></div>   sequence length, d_model and base
//       (opening elsewhere than at the defaults: data-n_positions="512", see `initial` below):
//       heat map of PE and the wavelengths of the pairs (pe_lib.explorer_figure, explorer_summary)
//   <div class="pe-explorer" data-explorer="base"></div>    d_model, base and L: the wavelengths
//       and ||PE(p+Δ) − PE(p)|| for Δ = 0..L (pe_lib.draw_base_overview, base_summary)
//
// The formulas are pe_lib's (pe_lib/frequencies.py, sinusoidal.py, base_analysis.py):
//   ω_k = exp(−(2k/d_model)·ln base),  λ_k = 2π/ω_k,
//   PE(pos, 2k) = sin(pos·ω_k),  PE(pos, 2k+1) = cos(pos·ω_k),
//   ||PE(p+Δ) − PE(p)||² = Σ_k 4 sin²(ω_k Δ/2).
// The browser tests compare these numbers with pe_lib's (to 1e-12) through window.peExplorer and
// each explorer's `peState` (its parameters and the numbers it shows).
(() => {
  "use strict";

  // ---- the mathematics ---------------------------------------------------------------------------
  const frequencies = (dModel, base) => {
    const half = Math.floor(dModel / 2);
    const omega = new Float64Array(half);
    const logBase = Math.log(base);
    for (let k = 0; k < half; k++) omega[k] = Math.exp(-((2 * k) / dModel) * logBase); // ω_k = base^(−2k/d)
    return omega;
  };

  const wavelengths = (dModel, base) => frequencies(dModel, base).map((w) => (2 * Math.PI) / w); // λ_k = 2π/ω_k

  // the table, row after row: entry (pos, j) at pos * dModel + j, interleaved sin/cos pairs
  const sinusoidal = (nPositions, dModel, base) => {
    const omega = frequencies(dModel, base);
    const table = new Float64Array(nPositions * dModel);
    for (let pos = 0; pos < nPositions; pos++) {
      for (let k = 0; k < omega.length; k++) {
        const angle = pos * omega[k];
        table[pos * dModel + 2 * k] = Math.sin(angle); // PE(pos, 2k)
        table[pos * dModel + 2 * k + 1] = Math.cos(angle); // PE(pos, 2k+1)
      }
    }
    return table;
  };

  // ||PE(p+Δ) − PE(p)|| for Δ = 0..length
  const distanceCurve = (dModel, length, base) => {
    const omega = frequencies(dModel, base);
    const out = new Float64Array(length + 1);
    for (let delta = 0; delta <= length; delta++) {
      let sum = 0;
      for (let k = 0; k < omega.length; k++) {
        const s = Math.sin((omega[k] * delta) / 2);
        sum += 4 * s * s; // 4 sin²(ω_k Δ/2)
      }
      out[delta] = Math.sqrt(sum);
    }
    return out;
  };

  // pe_lib.explorer_summary
  const explorerSummary = (nPositions, dModel, base) => {
    const lam = wavelengths(dModel, base);
    return {
      pairs: lam.length,
      full_turns: lam.filter((l) => l <= nPositions).length,
      shortest: lam[0],
      longest: lam[lam.length - 1],
      ratio: lam.length > 1 ? lam[1] / lam[0] : NaN,
    };
  };

  // pe_lib.base_summary
  const baseSummary = (dModel, length, base) => {
    const omega = frequencies(dModel, base);
    const lam = omega.map((w) => (2 * Math.PI) / w);
    return {
      pairs: lam.length,
      shortest_wavelength: lam[0],
      longest_wavelength: lam[lam.length - 1],
      slow_pairs: omega.filter((w) => w * length < 2 * Math.PI).length, // ω_k L < 2π
      neighbour_distance: distanceCurve(dModel, 1, base)[1],
    };
  };

  // ---- numbers as Python prints them -----------------------------------------------------------
  // Python's format(x, "g"): 6 significant digits, no trailing zeros, exponent below 1e-4 or from 1e6
  const formatG = (x, digits = 6) => {
    if (!Number.isFinite(x)) return String(x);
    if (x === 0) return "0";
    const exponent = Math.floor(Math.log10(Math.abs(Number(x.toPrecision(digits)))));
    if (exponent < -4 || exponent >= digits) {
      const [mantissa, power] = x.toExponential(digits - 1).split("e");
      const m = mantissa.includes(".") ? mantissa.replace(/\.?0+$/, "") : mantissa;
      const p = Number(power);
      return `${m}e${p < 0 ? "-" : "+"}${String(Math.abs(p)).padStart(2, "0")}`;
    }
    const fixed = x.toFixed(Math.max(0, digits - 1 - exponent));
    return fixed.includes(".") ? fixed.replace(/\.?0+$/, "") : fixed;
  };
  const fixed = (x, decimals) => x.toFixed(decimals);

  // ---- drawing -----------------------------------------------------------------------------------
  const COLORS = { blue: "#1f77b4", red: "#d62728", green: "#2ca02c", gray: "#7f7f7f", axis: "#222", grid: "#ddd" };
  // matplotlib's RdBu_r at 0, 0.1, ..., 1 (pe_lib's colour map of the table)
  const RDBU_R = ["#053061", "#2065ab", "#4393c3", "#90c4dd", "#d1e5f0", "#f7f6f6", "#fddbc7", "#f3a481", "#d6604d",
    "#b1182b", "#67001f"].map((hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)));

  const colour = (value) => {
    const t = Math.min(Math.max((value + 1) / 2, 0), 1) * (RDBU_R.length - 1); // [-1, 1] -> [0, 10]
    const i = Math.min(Math.floor(t), RDBU_R.length - 2);
    const f = t - i;
    return RDBU_R[i].map((c, j) => Math.round(c + f * (RDBU_R[i + 1][j] - c)));
  };

  const LUT_STEPS = 4096;
  let lutCache = null;
  const colourTable = () => {
    if (!lutCache) {
      lutCache = new Uint8ClampedArray(3 * (LUT_STEPS + 1));
      for (let i = 0; i <= LUT_STEPS; i++) lutCache.set(colour((2 * i) / LUT_STEPS - 1), 3 * i);
    }
    return lutCache;
  };

  const SUPERSCRIPT = { "-": "⁻", 0: "⁰", 1: "¹", 2: "²", 3: "³", 4: "⁴", 5: "⁵", 6: "⁶", 7: "⁷", 8: "⁸", 9: "⁹" };
  const powerOfTen = (e) => (e === 0 ? "1" : e === 1 ? "10" : `10${String(e).replace(/./g, (c) => SUPERSCRIPT[c])}`);

  const niceTicks = (lo, hi, count = 5) => {
    const span = hi - lo || 1;
    const raw = span / count;
    const magnitude = 10 ** Math.floor(Math.log10(raw));
    const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((s) => s >= raw) || magnitude * 10;
    const ticks = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) ticks.push(Number(v.toPrecision(12)));
    return ticks;
  };

  // A canvas at the device's resolution; returns its 2-D context in CSS pixels.
  const prepare = (canvas, width, height) => {
    const ratio = window.devicePixelRatio || 1;
    canvas.width = Math.round(width * ratio);
    canvas.height = Math.round(height * ratio);
    canvas.style.width = `${width}px`;
    canvas.style.height = `${height}px`;
    const ctx = canvas.getContext("2d");
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.fillStyle = "#fff";
    ctx.fillRect(0, 0, width, height);
    ctx.font = `12px ${getComputedStyle(canvas).fontFamily}`;
    return ctx;
  };

  // A title centred above (x, y) in at most maxWidth, never below 10 CSS px (the book's smallest figure
  // text; issue 30, item 7: titles squeezed by fillText's maxWidth came out at 9 px on a phone). Tried in
  // turn: the text from 12 px down to 10 px, then each shorter wording in ``alternatives``, then the last
  // wording at 10 px on two lines, broken at the space nearest its middle (the top margin holds both).
  const fitText = (ctx, text, x, y, maxWidth, alternatives = []) => {
    const font = ctx.font;
    const sized = (size) => font.replace(/^[\d.]+px/, `${size}px`);
    for (const wording of [text, ...alternatives]) {
      for (let size = 12; size >= 10; size -= 0.5) {
        ctx.font = sized(size);
        if (ctx.measureText(wording).width <= maxWidth) {
          ctx.fillText(wording, x, y);
          ctx.font = font;
          return;
        }
      }
    }
    const last = [text, ...alternatives].at(-1);
    const spaces = [...last.matchAll(/ /g)].map((m) => m.index);
    const cut = spaces.length ? spaces.reduce((a, b) => (Math.abs(b - last.length / 2) < Math.abs(a - last.length / 2) ? b : a)) : -1;
    ctx.font = sized(10);
    if (cut < 0) ctx.fillText(last, x, y);
    else {
      ctx.fillText(last.slice(0, cut), x, y - 12);
      ctx.fillText(last.slice(cut + 1), x, y);
    }
    ctx.font = font;
  };

  // Axes in a box {left, top, width, height}; x and y map data to pixels (linear or log10).
  const axes = (ctx, box, { x, y, xlabel, ylabel, title, shortTitle, ylog }) => {
    const px = (v) => box.left + ((v - x[0]) / (x[1] - x[0] || 1)) * box.width;
    const ly = ylog ? Math.log10 : (v) => v;
    const [y0, y1] = [ly(y[0]), ly(y[1])];
    const py = (v) => box.top + box.height - ((ly(v) - y0) / (y1 - y0 || 1)) * box.height;
    ctx.strokeStyle = COLORS.axis;
    ctx.fillStyle = COLORS.axis;
    ctx.lineWidth = 1;
    ctx.strokeRect(box.left, box.top, box.width, box.height);
    ctx.textAlign = "center";
    ctx.textBaseline = "top";
    for (const v of niceTicks(x[0], x[1])) {
      ctx.beginPath();
      ctx.moveTo(px(v), box.top + box.height);
      ctx.lineTo(px(v), box.top + box.height + 4);
      ctx.stroke();
      ctx.fillText(formatG(v), px(v), box.top + box.height + 6);
    }
    ctx.textAlign = "right";
    ctx.textBaseline = "middle";
    const yTicks = ylog
      ? Array.from({ length: Math.floor(y1) - Math.ceil(y0) + 1 }, (_, i) => 10 ** (Math.ceil(y0) + i))
      : niceTicks(y[0], y[1]);
    for (const v of yTicks) {
      ctx.beginPath();
      ctx.moveTo(box.left - 4, py(v));
      ctx.lineTo(box.left, py(v));
      ctx.stroke();
      ctx.fillText(ylog ? powerOfTen(Math.round(Math.log10(v))) : formatG(v), box.left - 6, py(v));
    }
    ctx.textAlign = "center";
    ctx.textBaseline = "bottom";
    ctx.fillText(xlabel, box.left + box.width / 2, box.top + box.height + 36);
    if (title) fitText(ctx, title, box.left + box.width / 2, box.top - 6, box.width, shortTitle ? [shortTitle] : []);
    ctx.save();
    ctx.translate(box.left - 46, box.top + box.height / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.textBaseline = "middle";
    ctx.fillText(ylabel, 0, 0);
    ctx.restore();
    return { px, py };
  };

  const legend = (ctx, box, entries) => {
    ctx.textAlign = "left";
    ctx.textBaseline = "middle";
    entries.forEach(([colourName, text, dash], i) => {
      const y = box.top + 12 + i * 16;
      ctx.strokeStyle = colourName;
      ctx.setLineDash(dash || []);
      ctx.lineWidth = 2;
      ctx.beginPath();
      ctx.moveTo(box.left + 8, y);
      ctx.lineTo(box.left + 24, y);
      ctx.stroke();
      ctx.setLineDash([]);
      ctx.fillStyle = COLORS.axis;
      ctx.fillText(text, box.left + 28, y);
    });
  };

  const dots = (ctx, map, xs, ys, colourName) => {
    ctx.fillStyle = colourName;
    for (let i = 0; i < xs.length; i++) {
      ctx.beginPath();
      ctx.arc(map.px(xs[i]), map.py(ys[i]), 1.8, 0, 2 * Math.PI);
      ctx.fill();
    }
  };

  const hline = (ctx, box, map, value, colourName, dash) => {
    ctx.strokeStyle = colourName;
    ctx.setLineDash(dash || []);
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    ctx.moveTo(box.left, map.py(value));
    ctx.lineTo(box.left + box.width, map.py(value));
    ctx.stroke();
    ctx.setLineDash([]);
  };

  const logRange = (values, extra) => {
    const all = [...values, ...extra].filter((v) => v > 0);
    const lo = Math.min(...all);
    const hi = Math.max(...all);
    return [10 ** Math.floor(Math.log10(lo)), 10 ** Math.ceil(Math.log10(hi) + 1e-12)];
  };

  // a log range with about a third more decades on top, empty, for the legend (pe_lib's explorer_figure
  // leaves the top quarter of its axis empty): the last wavelengths and the sequence length's line stood
  // under the legend (issue 30, item 3)
  const roomForLegend = ([lo, hi]) => [lo, 10 ** Math.ceil(Math.log10(hi) + Math.log10(hi / lo) / 3 - 1e-9)];

  const PLOT_MARGIN = { left: 64, right: 16, top: 28, bottom: 44 };
  const plotBox = (width, height, right = PLOT_MARGIN.right) => ({
    left: PLOT_MARGIN.left,
    top: PLOT_MARGIN.top,
    width: width - PLOT_MARGIN.left - right,
    height: height - PLOT_MARGIN.top - PLOT_MARGIN.bottom,
  });

  // heat map of the table, position 0 on top, with a colour bar
  const drawTable = (canvas, width, height, table, nPositions, dModel, title, shortTitle) => {
    const ctx = prepare(canvas, width, height);
    const box = plotBox(width, height, 70);
    const pixels = document.createElement("canvas");
    pixels.width = dModel;
    pixels.height = nPositions;
    const image = pixels.getContext("2d").createImageData(dModel, nPositions);
    // one colour per 1/4096 of [-1, 1], looked up: no array per cell (a 512 x 1024 table is half a
    // million cells, and a slider step took 350-400 ms: issue 19, item 14)
    const lut = colourTable();
    const data = image.data;
    for (let i = 0; i < table.length; i++) {
      const at = 3 * Math.round(Math.min(Math.max((table[i] + 1) / 2, 0), 1) * LUT_STEPS);
      data[4 * i] = lut[at];
      data[4 * i + 1] = lut[at + 1];
      data[4 * i + 2] = lut[at + 2];
      data[4 * i + 3] = 255;
    }
    pixels.getContext("2d").putImageData(image, 0, 0);
    ctx.imageSmoothingEnabled = true;
    ctx.imageSmoothingQuality = "high";
    ctx.drawImage(pixels, box.left, box.top, box.width, box.height);
    // axes: x is the dimension j, y the position (0 at the top)
    const map = axes(ctx, box, { x: [0, dModel], y: [0, nPositions], xlabel: "dimension j", ylabel: "position pos", title, shortTitle });
    // relabel y from the top: draw over the linear ticks with positions counted downwards
    ctx.fillStyle = "#fff";
    ctx.fillRect(0, box.top - 2, box.left - 5, box.height + 12);
    ctx.fillStyle = COLORS.axis;
    ctx.textAlign = "right";
    ctx.textBaseline = "middle";
    for (const v of niceTicks(0, nPositions)) ctx.fillText(formatG(v), box.left - 6, box.top + (v / nPositions) * box.height);
    ctx.save();
    ctx.translate(box.left - 46, box.top + box.height / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.textAlign = "center";
    ctx.fillText("position pos", 0, 0);
    ctx.restore();
    // colour bar
    const bar = { left: box.left + box.width + 14, top: box.top, width: 12, height: box.height };
    for (let i = 0; i < bar.height; i++) {
      const [r, g, b] = colour(1 - (2 * i) / bar.height);
      ctx.fillStyle = `rgb(${r},${g},${b})`;
      ctx.fillRect(bar.left, bar.top + i, bar.width, 1.5);
    }
    ctx.strokeStyle = COLORS.axis;
    ctx.strokeRect(bar.left, bar.top, bar.width, bar.height);
    ctx.fillStyle = COLORS.axis;
    ctx.textAlign = "left";
    [1, 0, -1].forEach((v) => ctx.fillText(String(v), bar.left + bar.width + 4, bar.top + ((1 - v) / 2) * bar.height));
    return map;
  };

  // ---- the two explorers -----------------------------------------------------------------------
  const slider = (explorer, { name, label, min, max, step, value, log }) => {
    const wrap = document.createElement("label");
    wrap.className = "pe-explorer__control";
    const text = document.createElement("span");
    // "d_model" is written as in the text, d with "model" below (the name as Python spells it is the input's name)
    const sub = /^(\w)_(\w+)$/.exec(label);
    if (sub) {
      const small = document.createElement("sub");
      small.textContent = sub[2];
      text.append(sub[1], small);
    } else {
      text.textContent = label;
    }
    const input = document.createElement("input");
    Object.assign(input, { type: "range", min, max, step, value, name });
    input.id = `${explorer.id}-${name}`;
    input.setAttribute("aria-label", label.replace("_", " "));
    const shown = document.createElement("output");
    shown.htmlFor = input.id;
    wrap.append(text, input, shown);
    // a log slider's value snaps to 3 significant digits (10^1.1 = 12.5893 read "12.6": issue 30, item 7);
    // what is drawn is computed for the value shown
    const read = () => (log ? Number((10 ** Number(input.value)).toPrecision(3)) : Number(input.value));
    const show = () => {
      shown.textContent = formatG(read());
      input.setAttribute("aria-valuetext", shown.textContent);
    };
    show();
    input.addEventListener("input", show);
    return { wrap, input, read };
  };

  const EXPLORERS = {
    // pe_lib.explorer_widget: length 1..512, d_model 2..1024 (even), base 10^0.5..10^6 on a log scale
    table: {
      label: "Explorer of the encoding table",
      controls: [
        { name: "n_positions", label: "length", min: 1, max: 512, step: 1, value: 64 },
        { name: "d_model", label: "d_model", min: 2, max: 1024, step: 2, value: 128 },
        { name: "base", label: "base", min: 0.5, max: 6, step: 0.1, value: 4, log: true },
      ],
      draw(canvases, width, { n_positions: n, d_model: d, base }) {
        const summary = explorerSummary(n, d, base);
        const table = sinusoidal(n, d, base);
        const [left, right] = canvases;
        const wide = width >= 640;
        const w1 = wide ? Math.round(width * 0.58) : width;
        const w2 = wide ? width - w1 - 9 : width;
        drawTable(left, w1, 300, table, n, d, `${n} positions x ${d} dimensions, base ${formatG(base)}`,
          `${n} x ${d}, base ${formatG(base)}`);
        const ctx = prepare(right, w2, 300);
        const box = plotBox(w2, 300);
        const lam = wavelengths(d, base);
        const k = Array.from(lam, (_, i) => i);
        const map = axes(ctx, box, {
          x: [-0.5, Math.max(lam.length - 0.5, 0.5)], y: roomForLegend(logRange(lam, [n])), ylog: true,
          xlabel: "pair index k", ylabel: "wavelength (tokens)",
          title: `${summary.full_turns} of ${summary.pairs} pairs turn fully within the sequence`,
          shortTitle: `${summary.full_turns} of ${summary.pairs} pairs turn fully`,
        });
        dots(ctx, map, k, lam, COLORS.blue);
        hline(ctx, box, map, n, COLORS.red);
        legend(ctx, box, [[COLORS.blue, "wavelength \u03bb\u2096 of pair k"], [COLORS.red, `sequence length ${n}`]]);
        const ratio = Number.isNaN(summary.ratio) ? "" : `, each ${formatG(summary.ratio, 4)} times the one before`;
        const text = `${n} positions × ${d} dimensions, base ${formatG(base)}: ${summary.full_turns} of ` +
          `${summary.pairs} pairs turn fully within the sequence; wavelengths from ${formatG(summary.shortest, 4)} ` +
          `to ${formatG(summary.longest, 4)} tokens${ratio}.`;
        return { summary, table, text };
      },
    },
    // pe_lib.drawing.base_explorer: d_model 2..1024 (even), base 10^0.1..10^7 on a log scale, L 1..4096
    base: {
      label: "Explorer of the base",
      controls: [
        { name: "d_model", label: "d_model", min: 2, max: 1024, step: 2, value: 512 },
        { name: "base", label: "base", min: 0.1, max: 7, step: 0.1, value: 4, log: true },
        { name: "length", label: "L", min: 1, max: 4096, step: 1, value: 128 },
      ],
      draw(canvases, width, { d_model: d, base, length }) {
        const summary = baseSummary(d, length, base);
        const lam = wavelengths(d, base);
        const slow = Array.from(lam, (l) => l > length);
        const [left, right] = canvases;
        const wide = width >= 640;
        const w = wide ? Math.floor((width - 9) / 2) : width;
        let ctx = prepare(left, w, 300);
        let box = plotBox(w, 300);
        let map = axes(ctx, box, {
          x: [-0.5, Math.max(lam.length - 0.5, 0.5)], y: logRange(lam, [length]), ylog: true,
          xlabel: "pair index k", ylabel: "wavelength (positions)",
          title: `${summary.slow_pairs} of ${summary.pairs} pairs have a wavelength > L = ${length}`,
          shortTitle: `${summary.slow_pairs} of ${summary.pairs} pairs: wavelength > L`,
        });
        const k = Array.from(lam, (_, i) => i);
        dots(ctx, map, k.filter((i) => !slow[i]), k.filter((i) => !slow[i]).map((i) => lam[i]), COLORS.blue);
        dots(ctx, map, k.filter((i) => slow[i]), k.filter((i) => slow[i]).map((i) => lam[i]), COLORS.gray);
        hline(ctx, box, map, length, COLORS.red, [5, 4]);
        legend(ctx, { left: box.left + box.width - 190, top: box.top + box.height - 56 }, [
          [COLORS.blue, `wavelength <= L (${slow.filter((s) => !s).length})`],
          [COLORS.gray, `wavelength > L (${slow.filter((s) => s).length})`],
          [COLORS.red, `L = ${length}`, [5, 4]],
        ]);
        const curve = distanceCurve(d, length, base);
        ctx = prepare(right, w, 300);
        box = plotBox(w, 300);
        const top = Math.max(...curve, Math.sqrt(d)) * 1.05;
        map = axes(ctx, box, {
          x: [0, length], y: [0, top], xlabel: "offset Δ (positions)", ylabel: "||PE(p+Δ) − PE(p)||",
          title: `neighbour distance ${fixed(summary.neighbour_distance, 3)}`,
        });
        ctx.strokeStyle = COLORS.blue;
        ctx.lineWidth = 1.2;
        ctx.beginPath();
        curve.forEach((v, delta) => (delta ? ctx.lineTo(map.px(delta), map.py(v)) : ctx.moveTo(map.px(0), map.py(v))));
        ctx.stroke();
        hline(ctx, box, map, summary.neighbour_distance, COLORS.green, [2, 3]);
        hline(ctx, box, map, Math.sqrt(d), COLORS.gray, [5, 4]);
        // centre right, as pe_lib's figure: at the bottom the neighbour distance's line crossed it (issue 30)
        legend(ctx, { left: box.left + box.width - 170, top: box.top + box.height / 2 - 20 }, [
          [COLORS.green, "neighbour distance", [2, 3]],
          [COLORS.gray, "sqrt(d_model)", [5, 4]],
        ]);
        const text = `longest wavelength ${fixed(summary.longest_wavelength, 1)} positions; d_model = ${d}, ` +
          `base = ${formatG(base)}: ${summary.slow_pairs} of ${summary.pairs} pairs have a wavelength > ` +
          `L = ${length}; neighbour distance ${fixed(summary.neighbour_distance, 3)}`;
        return { summary, curve, text };
      },
    },
  };

  // A page may open an explorer elsewhere than at its defaults: data-<slider name>="value" on the
  // element (for a log slider the value itself, not its log), e.g. data-n_positions="512". A value
  // that is no number or lies outside the slider's range is reported and the default used.
  const initial = (control, given) => {
    if (given === undefined) return control.value;
    const value = Number(given);
    const position = control.log ? Math.log10(value) : value;
    if (!Number.isFinite(position) || position < control.min || position > control.max) {
      console.warn(`pe-explorer: data-${control.name}="${given}" is outside ${control.name}'s range; default used`);
      return control.value;
    }
    return position;
  };

  let counter = 0;
  const build = (element) => {
    const spec = EXPLORERS[element.dataset.explorer];
    if (!spec || element.dataset.ready) return;
    element.dataset.ready = "true";
    element.id = element.id || `pe-explorer-${++counter}`;
    element.setAttribute("role", "group");
    element.setAttribute("aria-label", spec.label);
    const controls = spec.controls.map((c) => slider(element, { ...c, value: initial(c, element.dataset[c.name]) }));
    const numbers = document.createElement("p");
    numbers.className = "pe-explorer__numbers";
    numbers.setAttribute("aria-live", "polite");
    const figure = document.createElement("div");
    figure.className = "pe-explorer__figure";
    const canvases = [0, 1].map(() => {
      const canvas = document.createElement("canvas");
      canvas.setAttribute("role", "img");
      figure.appendChild(canvas);
      return canvas;
    });
    element.append(...controls.map((c) => c.wrap), numbers, figure);

    const redraw = () => {
      const params = Object.fromEntries(spec.controls.map((c, i) => [c.name, controls[i].read()]));
      const width = Math.floor(Math.min(Math.max(figure.clientWidth, 280), 1100));
      const result = spec.draw(canvases, width, params);
      numbers.textContent = result.text;
      canvases.forEach((canvas) => canvas.setAttribute("aria-label", result.text));
      element.peState = { params, summary: result.summary };
    };
    controls.forEach((c) => c.input.addEventListener("input", redraw));
    let lastWidth = 0;
    new ResizeObserver(() => {
      if (figure.clientWidth !== lastWidth) {
        lastWidth = figure.clientWidth;
        redraw();
      }
    }).observe(figure);
    redraw();
  };

  window.peExplorer = { frequencies, wavelengths, sinusoidal, distanceCurve, explorerSummary, baseSummary, formatG };
  const start = () => document.querySelectorAll(".pe-explorer[data-explorer]").forEach(build);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
