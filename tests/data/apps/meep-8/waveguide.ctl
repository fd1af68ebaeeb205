; A straight dielectric waveguide (epsilon 12) in a 2-D cell with PML all round, driven by a
; continuous Ez source near its left end: the first example of Meep's own tutorial, made small
; (tracelogic's tools/record/meep.sh). Parameters (name=value on the command line):
;   sx sy      cell size (default 16 x 8)        res    resolution, pixels per unit (10)
;   until      simulated time (20: 400 time steps at Courant 0.5)
;   pml?       PML layers of thickness 1 (true)
;   layout-only?  set up the fields, write Meep's chunk layout to chunk-layout.h5 and stop
;              (run untraced, without PML, it gives each process's box: with "Splitting into N
;              chunks by voxels" Meep cuts the cell into one box per process by voxel counts,
;              boxes in rank order, and PML only cuts those boxes further)
(define-param sx 16)
(define-param sy 8)
(define-param res 10)
(define-param until 20)
(define-param pml? true)
(define-param layout-only? false)
(set-param! resolution res)
(set! geometry-lattice (make lattice (size sx sy no-size)))
(set! geometry (list (make block (center 0 0) (size infinity 1 infinity)
                           (material (make dielectric (epsilon 12))))))
(set! sources (list (make source (src (make continuous-src (frequency 0.15)))
                         (component Ez) (center (+ (* -0.5 sx) 1.5) 0))))
(if pml? (set! pml-layers (list (make pml (thickness 1.0)))))
(if layout-only?
    (begin (init-fields)
           (meep-structure-dump-chunk-layout structure "chunk-layout.h5"))
    (run-until until))
