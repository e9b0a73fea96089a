package main

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"strings"
	"time"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// plot draws the soak's months as a PNG: flush and push time above, repo size below.
func plot(months []month, path string) error {
	const w, h = 900, 560
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	n := len(months)
	p50, p99, push, size, files := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for i, m := range months {
		p50[i], p99[i], push[i] = float64(m.flushP50.Milliseconds()), float64(m.flushP99.Milliseconds()), float64(m.pushP50.Milliseconds())
		size[i], files[i] = float64(m.git)/(1<<20), float64(m.files)/1000
	}
	blue, red, green := color.RGBA{31, 119, 180, 255}, color.RGBA{214, 39, 40, 255}, color.RGBA{44, 160, 44, 255}
	chart{img, image.Rect(70, 40, w-30, 250), "by simulated month (ms): flush p50 blue, flush p99 red, push p50 green"}.
		lines(len(months), []series{{p50, blue}, {p99, red}, {push, green}})
	chart{img, image.Rect(70, 320, w-30, h-50), ".git (MiB) blue, files in the worktree (thousands) green"}.
		lines(len(months), []series{{size, blue}, {files, green}})
	label(img, w/2-60, h-15, "simulated month", color.Black)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

type series struct {
	ys []float64
	c  color.Color
}

type chart struct {
	img   *image.RGBA
	r     image.Rectangle
	title string
}

// lines draws each series over n months, on axes from 0 to the largest value.
func (c chart) lines(n int, ss []series) {
	gray := color.RGBA{200, 200, 200, 255}
	top := 0.0
	for _, s := range ss {
		for _, y := range s.ys {
			top = max(top, y)
		}
	}
	if top == 0 {
		top = 1
	}
	label(c.img, c.r.Min.X, c.r.Min.Y-12, c.title, color.Black)
	for i := 0; i <= 4; i++ { // grid and the y axis's values
		y := c.r.Max.Y - i*c.r.Dy()/4
		line(c.img, c.r.Min.X, y, c.r.Max.X, y, gray)
		label(c.img, 5, y+4, fmt.Sprintf("%.0f", top*float64(i)/4), color.Black)
	}
	x := func(i int) int {
		if n < 2 {
			return c.r.Min.X
		}
		return c.r.Min.X + i*c.r.Dx()/(n-1)
	}
	for i := range n {
		label(c.img, x(i)-4, c.r.Max.Y+16, fmt.Sprint(i+1), color.Black)
	}
	for _, s := range ss {
		y := func(i int) int { return c.r.Max.Y - int(s.ys[i]/top*float64(c.r.Dy())) }
		for i := 1; i < len(s.ys); i++ {
			for d := -1; d <= 1; d++ { // three pixels wide
				line(c.img, x(i-1), y(i-1)+d, x(i), y(i)+d, s.c)
			}
		}
		for i := range s.ys {
			draw.Draw(c.img, image.Rect(x(i)-3, y(i)-3, x(i)+3, y(i)+3), image.NewUniform(s.c), image.Point{}, draw.Src)
		}
	}
}

// line draws from (x0, y0) to (x1, y1) (Bresenham).
func line(img *image.RGBA, x0, y0, x1, y1 int, c color.Color) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := sign(x1-x0), sign(y1-y0)
	e := dx + dy
	for {
		img.Set(x0, y0, c)
		if x0 == x1 && y0 == y1 {
			return
		}
		// Both steps decided on the error before either: deciding the second on the
		// error the first changed can step past (x1, y1) and never reach it.
		e2 := 2 * e
		if e2 >= dy {
			e += dy
			x0 += sx
		}
		if e2 <= dx {
			e += dx
			y0 += sy
		}
	}
}

func label(img *image.RGBA, x, y int, s string, c color.Color) {
	d := font.Drawer{Dst: img, Src: image.NewUniform(c), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
	d.DrawString(s)
}

func abs(v int) int { return max(v, -v) }

func sign(v int) int {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

// readTable reads the months back from the table a run printed.
func readTable(path string) ([]month, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var months []month
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Split(strings.Trim(l, "| "), " | ")
		if len(f) < 10 {
			continue
		}
		var m month
		if _, err := fmt.Sscan(f[0], &m.n); err != nil {
			continue // a heading
		}
		var p50, p99, push, gitMiB float64
		fmt.Sscanf(f[1], "%d", &m.observations)
		fmt.Sscanf(f[2], "%f ms", &p50)
		fmt.Sscanf(f[3], "%f ms", &p99)
		fmt.Sscanf(f[5], "%f ms", &push)
		fmt.Sscanf(f[8], "%f MiB", &gitMiB)
		fmt.Sscanf(f[9], "%d", &m.files)
		m.flushP50, m.flushP99, m.pushP50 = time.Duration(p50)*time.Millisecond, time.Duration(p99)*time.Millisecond, time.Duration(push)*time.Millisecond
		m.git = int64(gitMiB * (1 << 20))
		months = append(months, m)
	}
	if len(months) == 0 {
		return nil, fmt.Errorf("%s holds no table of months", path)
	}
	return months, nil
}
