package main

import (
	"image"
	"image/color"
	"testing"
	"time"
)

// TestLineEnds draws lines of every slope between the points of a small grid: each ends,
// on its end point (a soak's plot once drew one that stepped past it, forever).
func TestLineEnds(t *testing.T) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		img := image.NewRGBA(image.Rect(-20, -20, 20, 20))
		for x0 := -9; x0 <= 9; x0 += 3 {
			for y0 := -9; y0 <= 9; y0 += 2 {
				for x1 := -9; x1 <= 9; x1++ {
					for y1 := -9; y1 <= 9; y1++ {
						img.Pix = make([]uint8, len(img.Pix))
						line(img, x0, y0, x1, y1, color.Black)
						if img.RGBAAt(x1, y1).A == 0 {
							t.Errorf("line (%d,%d)–(%d,%d) does not reach its end", x0, y0, x1, y1)
						}
					}
				}
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("a line never ended")
	}
}
