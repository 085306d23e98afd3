# hybench report: plot style. `hybench report` copies this file into every report directory as
# style.gp, and every <plot>.gp there starts with `load 'style.gp'`. Edit the copy to restyle one
# report (then run `gnuplot <plot>.gp` in that directory), or this file to restyle future reports.
#
# Variables the plot scripts use:
#   hb_formats               output formats, each plot is drawn once per word ("svg png")
#   hb_term(fmt, w, h)       the `set terminal` command for one format and size (pixels)
#   hb_c_<phase>, hb_c_other colours of the phases in stacked bars (other: total minus the phases)
#   hb_c_band, hb_c_band_ok  shading of the plan's range and success band
#   linetypes 1-10           one colour per series (device or op), in order of appearance

hb_font = 'Liberation Sans,12'
hb_font_png = 'Liberation Sans,11'
hb_formats = "svg png"
hb_term(fmt, w, h) = (fmt eq 'svg') ? \
    sprintf("set terminal svg size %d,%d dynamic noenhanced font '%s' background rgb 'white'", w, h, hb_font) : \
    sprintf("set terminal pngcairo size %d,%d noenhanced font '%s' background rgb 'white'", w, h, hb_font_png)

# Tableau 10, distinguishable in print and for most colour-blind readers.
set linetype 1  lc rgb '#4e79a7' lw 2 pt 7  ps 0.7
set linetype 2  lc rgb '#f28e2b' lw 2 pt 5  ps 0.7
set linetype 3  lc rgb '#e15759' lw 2 pt 9  ps 0.8
set linetype 4  lc rgb '#76b7b2' lw 2 pt 13 ps 0.8
set linetype 5  lc rgb '#59a14f' lw 2 pt 11 ps 0.8
set linetype 6  lc rgb '#edc948' lw 2 pt 7  ps 0.7
set linetype 7  lc rgb '#b07aa1' lw 2 pt 5  ps 0.7
set linetype 8  lc rgb '#ff9da7' lw 2 pt 9  ps 0.8
set linetype 9  lc rgb '#9c755f' lw 2 pt 13 ps 0.8
set linetype 10 lc rgb '#bab0ac' lw 2 pt 11 ps 0.8
set linetype cycle 10

hb_c_convert_in  = '#e15759'
hb_c_h2d         = '#4e79a7'
hb_c_compute     = '#59a14f'
hb_c_d2h         = '#76b7b2'
hb_c_convert_out = '#f28e2b'
hb_c_other       = '#c8c8c8'
hb_c_band        = '#eaf1fb'
hb_c_band_ok     = '#d5ebd5'
hb_c_ceiling     = '#444444'

set border 3 lc rgb '#555555' lw 1
set tics nomirror out scale 0.6
set grid xtics ytics lc rgb '#e4e4e4' lw 1 dt 1
set key outside right top vertical Left reverse samplen 2 spacing 1.1 box lc rgb '#dddddd'
set title font ',13'
set style fill solid 0.85 noborder
set style histogram rowstacked
set boxwidth 0.8 relative
