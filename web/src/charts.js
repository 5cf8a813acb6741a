// uPlot, loaded with the first page that draws a chart (its small
// stylesheet is in app.css: a lazily loaded chunk's CSS is not linked).
import uPlot from 'uplot';

export default uPlot;
