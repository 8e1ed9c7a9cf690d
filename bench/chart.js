// The chart of a run: for each target a panel, in it one group of bars per trial and one bar per
// driver, the bar's height its ratio of ops/s to the baseline (fs.readFileSync, or its loop)
// measured in the same run. A peer's bar (Bun, Deno, the C loop: --peers) has a dark outline. The ratio axis is logarithmic, so that 2× faster and 2× slower are
// bars of the same length on either side of the 1× line. Plain SVG, no script: every browser
// shows it, and each bar's <title> gives its figures on hover.
'use strict';

// Enough colours for a quick run with its peers (25 drivers with bars) to repeat one at most;
// the outline tells a peer's bar from smartread's or Node's of the same colour.
const PALETTE = [
  '#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7',
  '#9c755f', '#bab0ac', '#1f77b4', '#8c564b', '#17becf', '#bcbd22', '#7f7f7f', '#d62728',
  '#393b79', '#637939', '#8c6d31', '#843c39', '#7b4173', '#5254a3', '#8ca252', '#bd9e39',
];
const PEER_OUTLINE = { stroke: '#222', 'stroke-width': 1.5 };

const BAR_WIDTH = 9;
const GROUP_GAP = 14;
const PLOT_HEIGHT = 260;
// Room for the rotated axis title and tick labels as long as "0.0156×" beside it.
const LEFT = 76;
const RIGHT = 24;
const PANEL_TITLE = 44;
// Below a plot, at least this much room for its trial labels, written at LABEL_ANGLE; a long
// label (warm-random4k-64m-32inflight) gets more, so it does not run into the next panel's title.
const LABEL_SPACE = 110;
const LABEL_ANGLE = 40;
const LABEL_CHAR_WIDTH = 6.5; // an 11 px character of the chart's fonts, at the widest
const labelSpace = (groups) => Math.max(LABEL_SPACE, 24 + Math.ceil(
  Math.max(...groups.map((g) => g.trial.length)) * LABEL_CHAR_WIDTH * Math.sin((LABEL_ANGLE * Math.PI) / 180)));
const LEGEND_ROW = 18;
const LEGEND_ITEM = 230;
const FONT = 'system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif';

const escapeXml = (text) => String(text).replace(/[&<>"']/g, (c) => ({
  '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;',
})[c]);

/**
 * One element: attributes from an object (escaped; null and undefined left out) and content,
 * either text (escaped) or { markup } (child elements, as they are).
 */
function element(name, attributes, content = null) {
  const attrs = Object.entries(attributes)
    .filter(([, value]) => value !== null && value !== undefined)
    .map(([key, value]) => ` ${key}="${escapeXml(value)}"`)
    .join('');
  if (content === null) return `<${name}${attrs}/>`;
  return `<${name}${attrs}>${typeof content === 'string' ? escapeXml(content) : content.markup}</${name}>`;
}

const text = (attributes, content) => element('text', attributes, content);

const formatRatio = (r) => (r >= 1 ? String(Number(r.toFixed(2))) : String(Number(r.toPrecision(3))));

/** The bars of one target: [{ trial, bars: [driver results] }], trials with none left out. */
function targetGroups(target) {
  return target.trials
    .filter((t) => !t.skipped)
    .map((t) => ({
      trial: t.name,
      bars: t.drivers.filter((d) => !d.baseline && typeof d.ratio === 'number' && d.ratio > 0),
    }))
    .filter((g) => g.bars.length > 0);
}

/** [lo, hi]: powers of two around every ratio of the run and around 1. */
function ratioRange(groups) {
  const ratios = groups.flatMap((g) => g.bars.map((b) => b.ratio));
  const lo = Math.min(0.5, ...ratios);
  const hi = Math.max(2, ...ratios);
  return [2 ** Math.floor(Math.log2(lo)), 2 ** Math.ceil(Math.log2(hi))];
}

function barTooltip(trial, bar) {
  const reference = typeof bar.ratioToReference === 'number' ? `, ${bar.ratioToReference.toFixed(2)}× fs.promises.readFile` : '';
  return `${trial}, ${bar.name}: ${bar.ratio.toFixed(2)}× fs.readFileSync${reference}, median ${bar.medianUs.toFixed(1)} µs`;
}

function panel(target, groups, colors, top, width) {
  const [lo, hi] = ratioRange(groups);
  const plotTop = top + PANEL_TITLE;
  const y = (ratio) => plotTop + PLOT_HEIGHT * (Math.log2(hi) - Math.log2(ratio)) / (Math.log2(hi) - Math.log2(lo));
  const out = [];
  const title = target.label ? `${target.label}${target.emulated ? ' (emulated)' : ''}` : target.dir;
  const device = target.device?.name ? ` on ${target.device.kind} ${target.device.name}` : '';
  out.push(text({ class: 'panel-title', x: LEFT, y: top + 16, 'font-size': 14, 'font-weight': 600 }, title));
  out.push(text({ x: LEFT, y: top + 31, 'font-size': 11, fill: '#555' }, `${target.dir}: ${target.fsType}${device}`));
  for (let e = Math.log2(lo); e <= Math.log2(hi); e++) {
    const gy = y(2 ** e).toFixed(1);
    const one = e === 0;
    out.push(element('line', { x1: LEFT, x2: width - RIGHT, y1: gy, y2: gy, stroke: one ? '#333' : '#ddd', 'stroke-width': one ? 1.5 : 1 }));
    out.push(text({ x: LEFT - 6, y: gy, dy: 4, 'text-anchor': 'end', 'font-size': 11 }, `${formatRatio(2 ** e)}×`));
  }
  out.push(text({
    transform: `translate(16 ${plotTop + PLOT_HEIGHT / 2}) rotate(-90)`, 'text-anchor': 'middle', 'font-size': 11,
  }, 'ops/s ÷ fs.readFileSync\'s (log scale)'));
  let x = LEFT + GROUP_GAP;
  for (const group of groups) {
    const groupStart = x;
    for (const bar of group.bars) {
      out.push(element('rect', {
        class: 'bar',
        'data-target': target.dir,
        'data-trial': group.trial,
        'data-driver': bar.name,
        'data-ratio': bar.ratio.toFixed(4),
        'data-peer': bar.peer ?? null,
        x,
        y: Math.min(y(1), y(bar.ratio)).toFixed(1),
        width: BAR_WIDTH - 1,
        height: Math.max(Math.abs(y(bar.ratio) - y(1)), 1).toFixed(1),
        fill: colors.get(bar.name),
        ...(bar.peer ? PEER_OUTLINE : {}),
      }, { markup: element('title', {}, barTooltip(group.trial, bar)) }));
      x += BAR_WIDTH;
    }
    const labelX = ((groupStart + x) / 2).toFixed(1);
    out.push(text({
      class: 'trial-label', transform: `translate(${labelX} ${plotTop + PLOT_HEIGHT + 12}) rotate(-${LABEL_ANGLE})`,
      'text-anchor': 'end', 'font-size': 11,
    }, group.trial));
    x += GROUP_GAP;
  }
  return out;
}

/** The run's chart as an SVG document (a string). */
function svgChart(document) {
  const panels = document.targets.map((target) => ({ target, groups: targetGroups(target) }));
  // One colour per driver, in the run's driver order, for the drivers that have a bar.
  const charted = new Set(panels.flatMap((p) => p.groups.flatMap((g) => g.bars.map((b) => b.name))));
  // A name can stand for two drivers (one per shape): listed once.
  const driverNames = [...new Set(document.drivers.map((d) => d.name))].filter((name) => charted.has(name));
  const peerNames = new Set(document.drivers.filter((d) => d.peer).map((d) => d.name));
  const colors = new Map(driverNames.map((name, i) => [name, PALETTE[i % PALETTE.length]]));

  const panelWidth = (groups) => groups.reduce((w, g) => w + g.bars.length * BAR_WIDTH + GROUP_GAP, GROUP_GAP);
  const width = Math.max(880, LEFT + Math.max(0, ...panels.map((p) => panelWidth(p.groups))) + RIGHT);
  const perRow = Math.max(1, Math.floor((width - LEFT) / LEGEND_ITEM));
  const legendHeight = Math.ceil(driverNames.length / perRow) * LEGEND_ROW + 8;
  const headerHeight = 66;

  const m = document.machine;
  const body = [
    text({ x: LEFT, y: 22, 'font-size': 16, 'font-weight': 700 }, `smartread bench, ${document.startedAt}`),
    text({ x: LEFT, y: 38, 'font-size': 11, fill: '#555' }, `${m.cpu}, ${m.cores} cores, ${m.kernel}, node ${m.node}`),
    text({ x: LEFT, y: 52, 'font-size': 11, fill: '#555' },
      'bars: ops/s ÷ fs.readFileSync\'s (its loop for many files) in the same run; above the line is faster; outlined: a peer (Bun, Deno, C)'),
  ];
  driverNames.forEach((name, i) => {
    const lx = LEFT + (i % perRow) * LEGEND_ITEM;
    const ly = headerHeight + Math.floor(i / perRow) * LEGEND_ROW;
    body.push(element('g', { class: 'legend-item' }, {
      markup: element('rect', { x: lx, y: ly, width: 12, height: 12, fill: colors.get(name), ...(peerNames.has(name) ? PEER_OUTLINE : {}) })
        + text({ x: lx + 17, y: ly + 10, 'font-size': 12 }, name),
    }));
  });
  let top = headerHeight + legendHeight;
  for (const { target, groups } of panels) {
    if (groups.length === 0) {
      body.push(text({ x: LEFT, y: top + 18, 'font-size': 14 }, `${target.dir}: no ratios to chart`));
      top += PANEL_TITLE + 10;
      continue;
    }
    body.push(...panel(target, groups, colors, top, width));
    top += PANEL_TITLE + PLOT_HEIGHT + labelSpace(groups);
  }
  const height = top + 10;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="${FONT}">`,
    element('rect', { width, height, fill: '#fff' }),
    ...body,
    '</svg>',
    '',
  ].join('\n');
}

module.exports = { svgChart };
